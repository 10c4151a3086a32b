'use client';

import { useQuery } from '@tanstack/react-query';
import { startTransition, useOptimistic } from 'react';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { ErrorPanel } from '@/ui/error-panel';
import { formatDuration, formatMoment } from '@/ui/format-time';
import { PendingNotice } from '@/ui/pending-notice';
import { StaleBanner } from '@/ui/stale-banner';
import { useFilterNavigation } from '@/ui/use-filter-navigation';
import { shortSeconds } from './bucket-label';
import { chartWindows, type ChartWindow } from './chart-windows';
import { NeedsAttention } from './needs-attention';
import { anomalyRows, outboxRows, runsRows, transitionRows } from './series-rows';
import { StateAgeChart } from './state-age-chart';
import { TimeChart } from './time-chart';

const countsRefreshMs = 5000;
const seriesRefreshMs = 15_000;

/**
 * The landing page: what needs attention first (counts that link to the filtered lists), then the
 * charts over a chosen window, refreshing on their own, with a banner when refreshes stop.
 */
export function OverviewPage({ window: current }: { window: ChartWindow }) {
  const trpc = useTRPC();
  const navigate = useFilterNavigation();
  const [window, setWindow] = useOptimistic(current);
  const overview = useQuery(trpc.overview.get.queryOptions(undefined, { refetchInterval: countsRefreshMs }));
  const series = useQuery(
    trpc.series.get.queryOptions({ window }, { refetchInterval: seriesRefreshMs, placeholderData: (p) => p }),
  );
  const choose = (next: ChartWindow) =>
    startTransition(() => {
      setWindow(next);
      navigate(next === '1h' ? '/' : `/?window=${next}`);
    });
  const s = series.data;
  const per = s?.bucket === 'hour' ? 'hour' : 'minute';
  const words = chartWindows.find((w) => w.value === window)?.words ?? window;
  return (
    <>
      <StaleBanner updatedAt={overview.dataUpdatedAt} intervalMs={countsRefreshMs} />
      <div className="page-head">
        <h1>Overview</h1>
        <span className="muted" data-testid="last-updated">
          {overview.dataUpdatedAt ? `Refreshing every 5 s · updated ${formatMoment(overview.dataUpdatedAt)}` : null}
        </span>
      </div>
      {overview.isPending ? (
        <PendingNotice
          label="Loading what needs attention…"
          failureCount={overview.failureCount}
          failureReason={overview.failureReason}
        />
      ) : null}
      {overview.isError ? (
        <ErrorPanel
          title={
            overview.data ? 'Refresh is failing: the counts below may be out of date' : 'Could not load the overview'
          }
          onRetry={() => void overview.refetch()}
        >
          <p>{apiErrorInfo(overview.error).message}</p>
        </ErrorPanel>
      ) : null}
      {overview.data ? <NeedsAttention overview={overview.data} /> : null}

      <section aria-labelledby="charts-heading" className="charts-section">
        <div className="toolbar">
          <h2 id="charts-heading">Activity</h2>
          <label>
            Window{' '}
            <select value={window} onChange={(e) => choose(e.target.value as ChartWindow)} data-testid="chart-window">
              {chartWindows.map((w) => (
                <option key={w.value} value={w.value}>
                  {w.label}
                </option>
              ))}
            </select>
          </label>
          <span className="muted">
            {series.dataUpdatedAt ? `charts refresh every 15 s · ${formatMoment(series.dataUpdatedAt)}` : null}
          </span>
        </div>
        {series.isPending ? (
          <PendingNotice
            label="Loading charts…"
            failureCount={series.failureCount}
            failureReason={series.failureReason}
          />
        ) : null}
        {series.isError ? (
          <ErrorPanel title="Could not load the charts" onRetry={() => void series.refetch()}>
            <p>{apiErrorInfo(series.error).message}</p>
          </ErrorPanel>
        ) : null}
        {s ? (
          <div className="chart-grid" data-testid="charts" aria-busy={series.isPlaceholderData}>
            <TimeChart
              title="Runs started and finished"
              {...runsRows(s)}
              bucket={s.bucket}
              unit={`runs per ${per}, by outcome`}
              empty={`No run started or finished in the last ${words}.`}
              testId="chart-runs"
            />
            <TimeChart
              title="Transitions (from → to)"
              {...transitionRows(s)}
              bucket={s.bucket}
              unit={`process transitions per ${per}`}
              empty={`No process instance moved in the last ${words}.`}
              testId="chart-transitions"
            />
            <TimeChart
              title="Anomalies by code"
              {...anomalyRows(s)}
              bucket={s.bucket}
              kind="bar"
              unit={`anomalies journaled per ${per}`}
              empty={`No anomaly journaled in the last ${words}: no lost claim, rejected outcome or engine fault.`}
              testId="chart-anomalies"
            />
            {overview.data ? <StateAgeChart states={overview.data.instances.byState} /> : null}
            <TimeChart
              title="Outbox lag"
              {...outboxRows(s)}
              bucket={s.bucket}
              unit={`longest wait of a message published that ${per} (seconds)`}
              formatValue={shortSeconds}
              empty={`No outbox message published in the last ${words}.`}
              testId="chart-outbox"
            />
            {overview.data ? (
              <p className="muted outbox-now" data-testid="outbox-now">
                Outbox now: {overview.data.outbox.pending} pending
                {overview.data.outbox.pending > 0
                  ? `, the oldest waiting ${formatDuration(overview.data.outbox.oldestPendingAgeSeconds * 1000)}`
                  : ''}
                ; {overview.data.outbox.dead} dead.
              </p>
            ) : null}
          </div>
        ) : null}
      </section>
    </>
  );
}
