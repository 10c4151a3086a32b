'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useRoleAllows } from '@/auth/use-session';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { ErrorPanel } from '@/ui/error-panel';
import { formatClock } from '@/ui/format-time';
import { PendingNotice } from '@/ui/pending-notice';
import { useNow } from '@/ui/use-now';
import { RunsFilterBar } from './runs-filter-bar';
import { statusesFor, wantsStuck, type RunsFilter } from './runs-filter';
import { RunsTable } from './runs-table';
import { StartDemoRun } from './start-demo-run';

const refreshMs = 2000;
const limit = 100;
// Stuck runs are picked out in the browser, so fetch as many as the API allows to find them.
const stuckLimit = 500;

/** The runs list: filters, a start button, and a table that refreshes every 2 s. */
export function RunsList({ filter }: { filter: RunsFilter }) {
  const trpc = useTRPC();
  const now = useNow();
  // Starting runs is an operator's; a viewer sees no control for it (the server refuses anyway).
  const canStart = useRoleAllows('operator');
  const status = statusesFor(filter);
  const stuck = wantsStuck(filter);
  const fetchLimit = stuck ? stuckLimit : limit;
  const runs = useQuery(
    trpc.runs.list.queryOptions(
      { ...(status ? { status } : {}), order: filter.order, limit: fetchLimit },
      { refetchInterval: refreshMs, placeholderData: (previous) => previous },
    ),
  );
  const fetched = runs.data;
  const shown = fetched && stuck ? fetched.filter((r) => r.stuckReason) : fetched;
  return (
    <>
      <div className="page-head">
        <h1>Runs</h1>
        {canStart ? <StartDemoRun /> : null}
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
      {fetched && stuck ? (
        <p className="muted" data-testid="stuck-filter-note">
          {shown?.length ?? 0} of the {fetched.length} runs fetched {shown?.length === 1 ? 'is' : 'are'} stuck (picked
          out in the browser: the API has no stuck filter yet
          {fetched.length === fetchLimit ? `; only the first ${fetchLimit} runs in this order were searched` : ''}).
        </p>
      ) : null}
      {shown && shown.length > 0 ? <RunsTable runs={shown} now={now} /> : null}
      {shown && shown.length === 0 ? (
        <p className="empty">
          {filter.status === 'all' && !stuck ? (
            'No runs yet. Start a demo run above, or start one through the API.'
          ) : (
            <>
              No runs match this filter{stuck ? ' (no run is stuck right now)' : ''}.{' '}
              <Link href="/runs">Show all runs</Link>
            </>
          )}
        </p>
      ) : null}
      {fetched && !stuck && fetched.length === limit ? (
        <p className="muted">Showing the first {limit} runs in this order.</p>
      ) : null}
    </>
  );
}
