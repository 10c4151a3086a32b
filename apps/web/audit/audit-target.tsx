import Link from 'next/link';
import type { AuditEntry } from '@/trpc/api-types';

/** What an audit entry acted on, linked when it is a run, a step of one, or an instance. */
export function AuditTarget({ entry }: { entry: AuditEntry }) {
  if (entry.targetId === null) return <span className="muted">—</span>;
  if (entry.runId !== null) {
    const step = entry.targetType === 'step' ? entry.targetId.split('#')[1] : undefined;
    return (
      <Link href={`/runs/${entry.runId}`} data-testid="audit-run-link">
        run <span className="mono">{entry.runId.slice(0, 8)}</span>
        {step !== undefined ? ` step #${step}` : ''}
      </Link>
    );
  }
  if (entry.instanceId !== null)
    return (
      <Link href={`/instances/${entry.instanceId}`} data-testid="audit-instance-link">
        instance <span className="mono">{entry.instanceId.slice(0, 8)}</span>
      </Link>
    );
  return (
    <span>
      {entry.targetType ?? 'target'} <span className="mono">{entry.targetId.slice(0, 40)}</span>
    </span>
  );
}
