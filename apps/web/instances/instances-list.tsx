'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { ErrorPanel } from '@/ui/error-panel';
import { formatClock } from '@/ui/format-time';
import { PendingNotice } from '@/ui/pending-notice';
import { useNow } from '@/ui/use-now';
import { InstancesFilterBar } from './instances-filter-bar';
import { instancesHref, type InstancesFilter } from './instances-filter';
import { InstancesTable } from './instances-table';
import { OutboxLag } from './outbox-lag';
import './instances.css';

const refreshMs = 2000;
// The API's most; there is no paging (seed 002) and no count, so the badge counts up to this.
const limit = 200;

const emptyText: Record<InstancesFilter['status'], string> = {
  ACTIVE: 'No active instances. An instance starts when its process receives its first message.',
  QUARANTINED: 'No quarantined instances. Nothing has stopped on a message it could not handle.',
  COMPLETED: 'No completed instances yet.',
};

/** The instances list: status tabs, a stalled filter for Active, and a table refreshing every 2 s. */
export function InstancesList({ filter }: { filter: InstancesFilter }) {
  const trpc = useTRPC();
  const now = useNow();
  const staleForSeconds = filter.stalledMinutes !== null ? filter.stalledMinutes * 60 : undefined;
  const instances = useQuery(
    trpc.instances.list.queryOptions(
      { status: filter.status, limit, ...(staleForSeconds !== undefined ? { staleForSeconds } : {}) },
      { refetchInterval: refreshMs, placeholderData: (previous) => previous },
    ),
  );
  const quarantined = useQuery(
    trpc.instances.list.queryOptions({ status: 'QUARANTINED', limit }, { refetchInterval: refreshMs }),
  );
  const quarantinedCount = quarantined.data
    ? quarantined.data.length >= limit
      ? `${limit}+`
      : String(quarantined.data.length)
    : null;
  const shown = instances.data;
  return (
    <>
      <div className="page-head">
        <h1>Instances</h1>
      </div>
      <OutboxLag />
      <div className="toolbar">
        <InstancesFilterBar filter={filter} quarantinedCount={quarantinedCount} />
        <span className="muted" aria-live="off">
          {instances.dataUpdatedAt
            ? `Stalest first · refreshing every 2 s · updated ${formatClock(new Date(instances.dataUpdatedAt).toISOString())}`
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
      {shown && shown.length > 0 ? <InstancesTable instances={shown} now={now} /> : null}
      {shown && shown.length === 0 ? (
        <p className="empty" data-testid="instances-empty">
          {filter.stalledMinutes !== null ? (
            <>
              No active instance has been stalled for more than {filter.stalledMinutes} min.{' '}
              <Link href={instancesHref({ status: 'ACTIVE', stalledMinutes: null })}>Show all active instances</Link>
            </>
          ) : (
            emptyText[filter.status]
          )}
        </p>
      ) : null}
      {shown && shown.length === limit ? (
        <p className="muted">Showing the {limit} stalest; there is no paging. Narrow the filter to see others.</p>
      ) : null}
    </>
  );
}
