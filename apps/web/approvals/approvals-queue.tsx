'use client';

import { useInfiniteQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useRoleAllows, useSession } from '@/auth/use-session';
import type { ApprovalRow } from '@/trpc/api-types';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { ErrorPanel } from '@/ui/error-panel';
import { formatRelative } from '@/ui/format-time';
import { LoadMore } from '@/ui/load-more';
import { PendingNotice } from '@/ui/pending-notice';
import { StaleBanner } from '@/ui/stale-banner';
import { Timestamp } from '@/ui/timestamp';
import { useNow } from '@/ui/use-now';
import { ApprovalDecision } from './approval-decision';
import { ApprovalPolicyPanel } from './approval-policy-panel';
import { ApprovalPreview } from './approval-preview';
import { ApprovalTarget } from './approval-target';
import './approvals.css';

const refreshMs = 3000;
const views = { pending: 'Waiting', decided: 'Decided' } as const;
export type View = keyof typeof views;

/**
 * The approvals queue (ADR 0020): repair commands that wait for a second operator, newest first, with
 * what each would do, who drafted it and why, and how long it has waited. An operator who did not
 * draft one approves it (it is applied then, against the state it was drafted against) or rejects it
 * with a reason; a viewer, and the drafter, see no buttons. Below: the policy, which an admin edits.
 */
export function ApprovalsQueue({ view, highlight }: { view: View; highlight: string | null }) {
  const trpc = useTRPC();
  const now = useNow();
  const list = useInfiniteQuery(
    trpc.approvals.list.infiniteQueryOptions(
      { status: view, limit: 50 },
      {
        getNextPageParam: (last) => last.nextCursor ?? undefined,
        refetchInterval: refreshMs,
        placeholderData: (previous) => previous,
      },
    ),
  );
  // An approval decided since the page was loaded (here or elsewhere) leaves the waiting view at once.
  const shown = list.data?.pages
    .flatMap((p) => p.items)
    .filter((a) => (view === 'pending' ? a.status === 'pending' : a.status !== 'pending'));
  return (
    <>
      <StaleBanner updatedAt={list.dataUpdatedAt} intervalMs={refreshMs} />
      <div className="page-head">
        <h1>Approvals</h1>
      </div>
      <p className="muted">
        Commands the approval policy holds for a second operator. Approving applies the command as drafted, and only if
        its target is still in the state it was drafted against.
      </p>
      <nav className="filters" aria-label="Approvals">
        {(Object.keys(views) as View[]).map((v) => (
          <Link
            key={v}
            href={v === 'pending' ? '/approvals' : '/approvals?view=decided'}
            aria-current={v === view ? 'page' : undefined}
            className={v === view ? 'tab tab-on' : 'tab'}
          >
            {views[v]}
          </Link>
        ))}
      </nav>
      {list.isPending ? (
        <PendingNotice label="Loading approvals…" failureCount={list.failureCount} failureReason={list.failureReason} />
      ) : null}
      {list.isError ? (
        <ErrorPanel title="Could not load approvals" onRetry={() => void list.refetch()}>
          <p>{apiErrorInfo(list.error).message}</p>
        </ErrorPanel>
      ) : null}
      {shown && shown.length === 0 ? (
        <p className="empty" data-testid="approvals-empty">
          {view === 'pending' ? 'Nothing waits for approval.' : 'No approval has been decided yet.'}
        </p>
      ) : null}
      <ol className="approval-list" data-testid="approvals">
        {shown?.map((a) => (
          <ApprovalCard key={a.id} approval={a} now={now} highlighted={a.id === highlight} />
        ))}
      </ol>
      <LoadMore query={list} shown={shown?.length ?? 0} noun="approvals" />
      <ApprovalPolicyPanel />
    </>
  );
}

function ApprovalCard({ approval, now, highlighted }: { approval: ApprovalRow; now: number; highlighted: boolean }) {
  const canDecide = useRoleAllows('operator');
  const me = useSession().data?.operator.name;
  const mine = me !== undefined && me === approval.drafter;
  return (
    <li
      className={`panel approval${highlighted ? ' approval-highlighted' : ''}`}
      id={`approval-${approval.id}`}
      data-testid="approval"
      data-approval-id={approval.id}
    >
      <h2>
        <code>{approval.command}</code> on <ApprovalTarget approval={approval} />{' '}
        <span className={`badge badge-${tone[approval.status] ?? 'muted'}`} data-testid="approval-status">
          {approval.status}
        </span>
      </h2>
      <dl className="facts">
        <dt>Drafted by</dt>
        <dd data-testid="approval-drafter">{approval.drafter}</dd>
        <dt>Reason</dt>
        <dd>{approval.reason}</dd>
        <dt>{approval.status === 'pending' ? 'Waiting since' : 'Drafted'}</dt>
        <dd>
          <Timestamp iso={approval.createdAt} now={now} />
        </dd>
        {approval.status === 'pending' ? (
          <>
            <dt>Expires</dt>
            <dd>{formatRelative(approval.expiresAt, now)}</dd>
          </>
        ) : (
          <>
            <dt>Decided by</dt>
            <dd>
              {approval.decidedBy ?? '—'}
              {approval.decisionReason ? `: ${approval.decisionReason}` : ''}
            </dd>
          </>
        )}
      </dl>
      <h3>What it would do (previewed when drafted)</h3>
      <ApprovalPreview approval={approval} />
      {approval.status === 'pending' && canDecide && !mine ? <ApprovalDecision approval={approval} /> : null}
      {approval.status === 'pending' && mine ? (
        <p className="muted" data-testid="approval-own">
          You drafted this command: a second operator must approve or reject it.
        </p>
      ) : null}
    </li>
  );
}

const tone: Record<string, string> = {
  pending: 'waiting',
  applying: 'active',
  applied: 'ok',
  conflict: 'bad',
  refused: 'bad',
  rejected: 'muted',
  expired: 'muted',
};
