'use client';

import { useInfiniteQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { ErrorPanel } from '@/ui/error-panel';
import { formatMoment } from '@/ui/format-time';
import { LoadMore } from '@/ui/load-more';
import { PendingNotice } from '@/ui/pending-notice';
import { SelectionBar } from '@/ui/selection-bar';
import { StaleBanner } from '@/ui/stale-banner';
import { useNow } from '@/ui/use-now';
import { BulkDraftPanel } from '@/repairs/bulk-draft-panel';
import { isBulkDraft, useKeptDraft } from '@/repairs/use-kept-draft';
import { BulkRepairPicker } from './bulk-repair';
import { RunStatusCounts } from './run-status-counts';
import { RunsFilterBar } from './runs-filter-bar';
import { pageInputFor, wantsStuck, type RunsFilter } from './runs-filter';
import { RunsTable } from './runs-table';

const refreshMs = 2000;

/**
 * The runs list: filters, search and per-status counts answered by the server (runs.page), pages
 * of 50 joined by "Load more" through the API's cursor, refreshing every 2 s, and a banner when
 * the refreshes stop being answered.
 */
export function RunsList({ filter }: { filter: RunsFilter }) {
  const trpc = useTRPC();
  const now = useNow();
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  // The open bulk draft is kept in this tab while open, so a session ending under it does not lose it (use-kept-draft.ts).
  const keptBulk = useKeptDraft('bulk', isBulkDraft);
  const bulk = keptBulk.open;
  const runs = useInfiniteQuery(
    trpc.runs.page.infiniteQueryOptions(pageInputFor(filter), {
      getNextPageParam: (last) => last.nextCursor ?? undefined,
      refetchInterval: refreshMs,
      placeholderData: (previous) => previous,
    }),
  );
  const pages = runs.data?.pages;
  const shown = pages?.flatMap((p) => p.items);
  const counts = pages?.[0];
  const stuck = wantsStuck(filter);
  const filtered = filter.status !== 'all' || stuck || filter.flow !== '' || filter.q !== '';
  return (
    <>
      <StaleBanner updatedAt={runs.dataUpdatedAt} intervalMs={refreshMs} />
      <div className="page-head">
        <h1>Runs</h1>
      </div>
      <div className="toolbar">
        <RunsFilterBar filter={filter} />
        <span className="muted" aria-live="off" data-testid="last-updated">
          {runs.dataUpdatedAt ? `Refreshing every 2 s · updated ${formatMoment(runs.dataUpdatedAt)}` : null}
        </span>
      </div>
      {counts ? <RunStatusCounts filter={filter} counts={counts.counts} cap={counts.countCap} /> : null}
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
          <SelectionBar count={selected.size} onClear={() => setSelected(new Set())} noun="run">
            <BulkRepairPicker runs={shown} selected={selected} onDraft={keptBulk.start} />
          </SelectionBar>
          <RunsTable runs={shown} now={now} selected={selected} onSelect={setSelected} />
        </>
      ) : null}
      {shown && shown.length === 0 ? (
        <p className="empty" data-testid="runs-empty">
          {!filtered ? (
            <>
              No runs yet. Start one through the API, or from the <Link href="/demo">demo page</Link>.
            </>
          ) : (
            <>
              No runs match this filter{stuck ? ' (no run is stuck right now)' : ''}.{' '}
              <Link href="/runs">Show all runs</Link>
            </>
          )}
        </p>
      ) : null}
      <LoadMore query={runs} shown={shown?.length ?? 0} noun="runs" />
    </>
  );
}
