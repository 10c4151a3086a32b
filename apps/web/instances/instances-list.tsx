'use client';

import { useInfiniteQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { isBulkDraft, useKeptDraft } from '@/repairs/use-kept-draft';
import { BulkDraftPanel } from '@/repairs/bulk-draft-panel';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { ErrorPanel } from '@/ui/error-panel';
import { formatMoment } from '@/ui/format-time';
import { LoadMore } from '@/ui/load-more';
import { PendingNotice } from '@/ui/pending-notice';
import { SelectionBar } from '@/ui/selection-bar';
import { StaleBanner } from '@/ui/stale-banner';
import { useNow } from '@/ui/use-now';
import { InstanceBulkRepairPicker } from './instance-bulk-repair';
import { InstancesFilterBar } from './instances-filter-bar';
import { instancesHref, instancesPageInputFor, type InstancesFilter } from './instances-filter';
import { InstancesTable } from './instances-table';
import { DeadOutbox } from './dead-outbox';
import { OutboxLag } from './outbox-lag';
import './instances.css';

const refreshMs = 2000;

const emptyText: Record<InstancesFilter['status'], string> = {
  ACTIVE: 'No active instances. An instance starts when its process receives its first message.',
  QUARANTINED: 'No quarantined instances. Nothing has stopped on a message it could not handle.',
  COMPLETED: 'No completed instances yet.',
};

/**
 * The instances list: status tabs with per-status counts, search by id or correlation key, a
 * state filter (ManualReview) and a stalled filter for Active, all answered by the server
 * (instances.page); pages of 50 joined by "Load more"; refreshing every 2 s. Ticked quarantined
 * instances can be released in one bulk repair, with each one's outcome; Dead outbox rows, listed
 * under the outbox figures, can be requeued in one.
 */
export function InstancesList({ filter }: { filter: InstancesFilter }) {
  const trpc = useTRPC();
  const now = useNow();
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  // The open bulk draft is kept in this tab while open, so a session ending under it does not lose it (use-kept-draft.ts).
  const keptBulk = useKeptDraft('bulk', isBulkDraft);
  const bulk = keptBulk.open;
  const instances = useInfiniteQuery(
    trpc.instances.page.infiniteQueryOptions(instancesPageInputFor(filter), {
      getNextPageParam: (last) => last.nextCursor ?? undefined,
      refetchInterval: refreshMs,
      placeholderData: (previous) => previous,
    }),
  );
  const first = instances.data?.pages[0];
  const tabCounts = first
    ? (Object.fromEntries(
        Object.entries(first.counts).map(([status, n]) => [
          status,
          n >= first.countCap ? `${first.countCap}+` : String(n),
        ]),
      ) as Record<InstancesFilter['status'], string>)
    : null;
  const shown = instances.data?.pages.flatMap((p) => p.items);
  return (
    <>
      <StaleBanner updatedAt={instances.dataUpdatedAt} intervalMs={refreshMs} />
      <div className="page-head">
        <h1>Instances</h1>
      </div>
      <OutboxLag />
      <DeadOutbox now={now} />
      <div className="toolbar">
        <InstancesFilterBar filter={filter} counts={tabCounts} />
        <span className="muted" aria-live="off">
          {instances.dataUpdatedAt
            ? `Stalest first · refreshing every 2 s · updated ${formatMoment(instances.dataUpdatedAt)}`
            : null}
        </span>
      </div>
      {filter.status === 'QUARANTINED' ? (
        <p className="muted">
          A quarantined instance stopped on a message it could not handle: it skips its own later messages and its
          timers do not fire, while other instances go on. Open one to see what it stopped on.
        </p>
      ) : null}
      {instances.isPending ? (
        <PendingNotice
          label="Loading instances…"
          failureCount={instances.failureCount}
          failureReason={instances.failureReason}
        />
      ) : null}
      {instances.isError ? (
        <ErrorPanel
          title={instances.data ? 'Refresh is failing: the list below may be out of date' : 'Could not load instances'}
          onRetry={() => void instances.refetch()}
        >
          <p>{apiErrorInfo(instances.error).message}</p>
        </ErrorPanel>
      ) : null}
      {bulk ? (
        <BulkDraftPanel
          key={bulk.draft.idempotencyKey}
          draft={bulk.draft}
          onClose={keptBulk.close}
          onApplied={() => setSelected(new Set())}
          initialReason={bulk.initialReason}
          onReasonChange={keptBulk.reasonChanged}
          onSent={keptBulk.sent}
          restored={bulk.restored}
        />
      ) : null}
      {shown && shown.length > 0 ? (
        <>
          <SelectionBar count={selected.size} onClear={() => setSelected(new Set())} noun="instance">
            <InstanceBulkRepairPicker instances={shown} selected={selected} onDraft={keptBulk.start} />
          </SelectionBar>
          <InstancesTable instances={shown} now={now} selected={selected} onSelect={setSelected} />
        </>
      ) : null}
      {shown && shown.length === 0 ? (
        <p className="empty" data-testid="instances-empty">
          {filter.stalledMinutes !== null ? (
            <>
              No active instance has been stalled for more than {filter.stalledMinutes} min.{' '}
              <Link href={instancesHref({ ...filter, status: 'ACTIVE', stalledMinutes: null })}>
                Show all active instances
              </Link>
            </>
          ) : filter.q || filter.state || filter.failingOnly ? (
            <>
              No {filter.status.toLowerCase()} instance matches this search or state
              {filter.failingOnly ? ' and is failing' : ''}.{' '}
              <Link
                href={instancesHref({
                  status: filter.status,
                  stalledMinutes: null,
                  state: '',
                  q: '',
                  failingOnly: false,
                })}
              >
                Clear them
              </Link>
            </>
          ) : (
            emptyText[filter.status]
          )}
        </p>
      ) : null}
      <LoadMore query={instances} shown={shown?.length ?? 0} noun="instances" />
    </>
  );
}
