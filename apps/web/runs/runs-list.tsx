'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { ErrorPanel } from '@/ui/error-panel';
import { formatClock } from '@/ui/format-time';
import { PendingNotice } from '@/ui/pending-notice';
import { useNow } from '@/ui/use-now';
import { RunsFilterBar } from './runs-filter-bar';
import { statusesFor, type RunsFilter } from './runs-filter';
import { RunsTable } from './runs-table';
import { StartDemoRun } from './start-demo-run';

const refreshMs = 2000;
const limit = 100;

/** The runs list: filters, a start button, and a table that refreshes every 2 s. */
export function RunsList({ filter }: { filter: RunsFilter }) {
  const trpc = useTRPC();
  const now = useNow();
  const status = statusesFor(filter.status);
  const runs = useQuery(
    trpc.runs.list.queryOptions(
      { ...(status ? { status } : {}), order: filter.order, limit },
      { refetchInterval: refreshMs, placeholderData: (previous) => previous },
    ),
  );
  return (
    <>
      <div className="page-head">
        <h1>Runs</h1>
        <StartDemoRun />
      </div>
      <div className="toolbar">
        <RunsFilterBar filter={filter} />
        <span className="muted" aria-live="off">
          {runs.dataUpdatedAt
            ? `Refreshing every 2 s · updated ${formatClock(new Date(runs.dataUpdatedAt).toISOString())}`
            : null}
        </span>
      </div>
      {runs.isPending ? (
        <PendingNotice label="Loading runs…" failureCount={runs.failureCount} failureReason={runs.failureReason} />
      ) : null}
      {runs.isError ? (
        <ErrorPanel
          title={runs.data ? 'Refresh is failing: the list below may be out of date' : 'Could not load runs'}
          onRetry={() => void runs.refetch()}
        >
          <p>{apiErrorInfo(runs.error).message}</p>
        </ErrorPanel>
      ) : null}
      {runs.data && runs.data.length > 0 ? <RunsTable runs={runs.data} now={now} /> : null}
      {runs.data && runs.data.length === 0 ? (
        <p className="empty">
          {filter.status === 'all' ? (
            'No runs yet. Start a demo run above, or start one through the API.'
          ) : (
            <>
              No runs match this filter. <Link href="/runs">Show all runs</Link>
            </>
          )}
        </p>
      ) : null}
      {runs.data && runs.data.length === limit ? (
        <p className="muted">Showing the first {limit} runs in this order.</p>
      ) : null}
    </>
  );
}
