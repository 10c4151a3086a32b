import Link from 'next/link';
import type { ApprovalRow } from '@/trpc/api-types';

/** Where the command acts, as a link to the run or instance page (a bulk lists its targets). */
export function ApprovalTarget({ approval }: { approval: ApprovalRow }) {
  const { target } = approval;
  if (target.type === 'instance') return <Link href={`/instances/${target.id}`}>instance {short(target.id)}</Link>;
  // An outbox row has no page of its own: its instance's page lists it (ADR 0104).
  if (target.type === 'outbox')
    return (
      <span>
        outbox row <code title={target.id}>{short(target.id)}</code>
      </span>
    );
  if (target.type === 'run' || target.type === 'step') {
    const [runId = '', step] = target.id.split('#');
    return (
      <Link href={`/runs/${runId}`}>
        run {short(runId)}
        {step ? ` step ${step}` : ''}
      </Link>
    );
  }
  const items = (approval.payload as { items?: { target?: { runId?: string; instanceId?: string } }[] }).items ?? [];
  return (
    <span>
      {target.id}:{' '}
      {items.slice(0, 5).map((item, i) => {
        const runId = item.target?.runId;
        const instanceId = item.target?.instanceId;
        return (
          <span key={runId ?? instanceId ?? i}>
            {i > 0 ? ', ' : ''}
            {runId ? <Link href={`/runs/${runId}`}>run {short(runId)}</Link> : null}
            {instanceId ? <Link href={`/instances/${instanceId}`}>instance {short(instanceId)}</Link> : null}
          </span>
        );
      })}
      {items.length > 5 ? ` and ${items.length - 5} more` : ''}
    </span>
  );
}

const short = (id: string) => id.slice(0, 8);
