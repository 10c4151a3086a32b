import Link from 'next/link';
import type { ReactNode } from 'react';
import type { Overview } from '@/trpc/api-types';

function Item({
  count,
  href,
  children,
  testId,
}: {
  count: number;
  href?: string;
  children: ReactNode;
  testId: string;
}) {
  const tone = count > 0 ? 'attention-item attention-bad' : 'attention-item';
  const body = (
    <>
      <span className="attention-count num">{count}</span> <span>{children}</span>
    </>
  );
  return (
    <li className={tone} data-testid={testId} data-count={count}>
      {href ? <Link href={href}>{body}</Link> : body}
    </li>
  );
}

/**
 * What needs someone now, first on the page: stuck runs by reason, quarantined, failing (ADR 0127)
 * and ManualReview instances, dead outbox messages, repairs held for a second operator; each count links to the list
 * filtered to exactly those (the approvals page opens on the pending queue).
 */
export function NeedsAttention({ overview }: { overview: Overview }) {
  const reasons = Object.entries(overview.stuck.byReason).sort(([a], [b]) => (a < b ? -1 : 1));
  // Active ones: a quarantined instance in ManualReview is counted (and listed) as quarantined.
  const manualReview = overview.instances.byState
    .filter((s) => s.state === 'ManualReview')
    .reduce((n, s) => n + s.active, 0);
  const nothing =
    overview.stuck.total === 0 &&
    overview.instances.quarantined === 0 &&
    overview.instances.failing === 0 &&
    manualReview === 0 &&
    overview.outbox.dead === 0 &&
    overview.approvals.pending === 0;
  return (
    <section className="panel" aria-labelledby="attention-heading" data-testid="needs-attention">
      <h2 id="attention-heading">Needs attention</h2>
      {nothing ? (
        <p className="notice notice-ok" data-testid="attention-clear">
          Nothing needs attention: no stuck run, no quarantined, failing or ManualReview instance, no dead outbox
          message, no repair awaiting approval.
        </p>
      ) : null}
      <ul className="attention-list">
        <Item count={overview.stuck.total} href="/runs?status=stuck&order=stalest" testId="attention-stuck">
          stuck {overview.stuck.total === 1 ? 'run' : 'runs'}
        </Item>
        {reasons.map(([reason, count]) => (
          <Item
            key={reason}
            count={count}
            href={`/runs?status=stuck&order=stalest&reason=${encodeURIComponent(reason)}`}
            testId="attention-stuck-reason"
          >
            stuck: <code>{reason}</code>
          </Item>
        ))}
        <Item
          count={overview.instances.quarantined}
          href="/instances?status=QUARANTINED"
          testId="attention-quarantined"
        >
          quarantined {overview.instances.quarantined === 1 ? 'instance' : 'instances'}
        </Item>
        <Item count={overview.instances.failing} href="/instances?failing=1" testId="attention-failing">
          failing active {overview.instances.failing === 1 ? 'instance' : 'instances'}{' '}
          <span className="muted">
            (a message or a timeout keeps failing
            {overview.instances.failingTimeouts > 0 ? `; ${overview.instances.failingTimeouts} failing timeouts` : ''})
          </span>
        </Item>
        <Item count={manualReview} href="/instances?state=ManualReview" testId="attention-manual-review">
          in ManualReview
        </Item>
        <Item count={overview.outbox.dead} testId="attention-outbox-dead">
          dead outbox {overview.outbox.dead === 1 ? 'message' : 'messages'}{' '}
          <span className="muted">(gave up publishing; each instance page lists its outbox rows)</span>
        </Item>
        <Item count={overview.approvals.pending} href="/approvals" testId="attention-approvals">
          {overview.approvals.pending === 1 ? 'repair awaits' : 'repairs await'} a second operator&apos;s approval
        </Item>
      </ul>
    </section>
  );
}
