'use client';

import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
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
import { ApprovalDecision, type DecisionOutcome } from './approval-decision';
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
  // What this page's operator decided (or tried to): the approval stays on the page with the answer,
  // whatever it became meanwhile (review 33: a 409 "already applied" vanished with its card).
  const [outcomes, setOutcomes] = useState<Record<string, DecisionOutcome>>({});
  const decided = (id: string) => (o: DecisionOutcome) => setOutcomes((all) => ({ ...all, [id]: o }));
  // An approval decided since the page was loaded (here or elsewhere) leaves the waiting view at once.
  const shown = list.data?.pages
    .flatMap((p) => p.items)
    .filter((a) => (view === 'pending' ? a.status === 'pending' : a.status !== 'pending'));
  // The approval a link named, and those acted on here, are shown whatever their status, read one by one.
  const listed = new Set(shown?.map((a) => a.id));
  // A decision refused (another operator decided first) keeps its approval on the page with the answer;
  // one that went through says so above the queue, and the approval leaves the waiting view as before.
  const refused = Object.keys(outcomes).filter((id) => !outcomes[id]!.ok);
  const done = Object.entries(outcomes).filter(([, o]) => o.ok);
  const followed = [...new Set([...(highlight ? [highlight] : []), ...refused])].filter((id) => !listed.has(id));
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
      {done.map(([id, o]) => (
        <p key={id} className="notice notice-ok" role="status" data-testid="approval-outcome">
          {o.text}
        </p>
      ))}
      {followed.length > 0 ? (
        <ol className="approval-list" data-testid="approvals-followed" aria-label="The approval you followed">
          {followed.map((id) => (
            <FollowedApproval
              key={id}
              id={id}
              now={now}
              highlighted={id === highlight}
              outcome={outcomes[id]}
              onOutcome={decided(id)}
            />
          ))}
        </ol>
      ) : null}
      {shown && shown.length === 0 ? (
        <p className="empty" data-testid="approvals-empty">
          {view === 'pending' ? 'Nothing waits for approval.' : 'No approval has been decided yet.'}
        </p>
      ) : null}
      <ol className="approval-list" data-testid="approvals">
        {shown?.map((a) => (
          <ApprovalCard
            key={a.id}
            approval={a}
            now={now}
            highlighted={a.id === highlight}
            outcome={outcomes[a.id]}
            onOutcome={decided(a.id)}
          />
        ))}
      </ol>
      <LoadMore query={list} shown={shown?.length ?? 0} noun="approvals" />
      <ApprovalPolicyPanel />
    </>
  );
}

/**
 * One approval by its id, whatever its status: the one a link named (the drafter's "see it in the
 * approvals queue", after it was decided) or one this page acted on. An id that names none says so.
 */
function FollowedApproval({
  id,
  now,
  highlighted,
  outcome,
  onOutcome,
}: {
  id: string;
  now: number;
  highlighted: boolean;
  outcome: DecisionOutcome | undefined;
  onOutcome: (o: DecisionOutcome) => void;
}) {
  const trpc = useTRPC();
  const one = useQuery(
    trpc.approvals.get.queryOptions({ id }, { refetchInterval: refreshMs, retry: false, placeholderData: (p) => p }),
  );
  if (one.data)
    return (
      <ApprovalCard approval={one.data} now={now} highlighted={highlighted} outcome={outcome} onOutcome={onOutcome} />
    );
  if (!one.isError) return null;
  const status = apiErrorInfo(one.error).httpStatus;
  return (
    <li className="panel approval" data-testid="approval-not-found">
      <p className="notice notice-warn" role="status">
        {status === 404 || status === 400
          ? `No approval ${id}: it does not exist, or it was removed with its target's history.`
          : `Could not load approval ${id}: ${apiErrorInfo(one.error).message}`}{' '}
        <Link href="/approvals?view=decided">See the decided approvals</Link>
      </p>
    </li>
  );
}

function ApprovalCard({
  approval,
  now,
  highlighted,
  outcome,
  onOutcome,
}: {
  approval: ApprovalRow;
  now: number;
  highlighted: boolean;
  outcome: DecisionOutcome | undefined;
  onOutcome: (o: DecisionOutcome) => void;
}) {
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
      {approval.status === 'pending' && canDecide && !mine ? (
        <ApprovalDecision approval={approval} onOutcome={onOutcome} />
      ) : null}
      {outcome && !outcome.ok ? (
        <p className="notice notice-bad" role="alert" data-testid="approval-error">
          {outcome.text}
        </p>
      ) : null}
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
