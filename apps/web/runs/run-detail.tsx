'use client';

import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '@/trpc/trpc-context';
import { DetailFrame } from '@/ui/detail-frame';
import { useNow } from '@/ui/use-now';
import { AnomaliesTable } from './anomalies-table';
import { childRunIds } from './child-run-ids';
import { CompensationsTable } from './compensations-table';
import { EventsTimeline } from './events-timeline';
import { RunHeader } from './run-header';
import { DownloadHistoryLink } from '@/history/download-history-link';
import { RunLeftUndone } from './run-left-undone';
import { RunLoadError } from './run-load-error';
import { RunRepairs } from './run-repairs';
import { isOpenRun } from './run-statuses';
import { RunStuckBanner } from './run-stuck-banner';
import { RunTimeline, StuckHistory } from './run-timeline';
import { StepsTable } from './steps-table';
import { TimingPolicy } from './timing-policy';

/**
 * One run: why it is stuck (if it is) with its safe repairs, header, the timeline of its steps
 * (attempts, events, anomalies and compensations where they happened), when it was stuck, the
 * timing policy it runs under, steps, compensations, anomalies and events; polls every second until
 * the run reaches a terminal status.
 */
export function RunDetailView({ id }: { id: string }) {
  const trpc = useTRPC();
  const now = useNow();
  const detail = useQuery(
    trpc.runs.get.queryOptions(
      { id },
      // Poll only a run we have seen and that is still open; a missing run will not appear by polling.
      { refetchInterval: (query) => (query.state.data && isOpenRun(query.state.data.run.status) ? 1000 : false) },
    ),
  );
  return (
    <DetailFrame
      back={{ href: '/runs', label: 'All runs' }}
      query={detail}
      pendingLabel={`Loading run ${id}…`}
      loadError={(error, retry) => <RunLoadError id={id} error={error} onRetry={retry} />}
    >
      {(detail) => {
        const { run, actions, compensations, anomalies, events } = detail;
        return (
          <>
            {run.stuckReason ? <RunStuckBanner reason={run.stuckReason} anomalyCount={anomalies.length} /> : null}
            {run.leftUndone ? <RunLeftUndone leftUndone={run.leftUndone} /> : null}
            <RunHeader run={run} now={now} />
            <DownloadHistoryLink kind="run" id={run.id} />
            <RunRepairs run={run} steps={actions} compensations={compensations} />
            <section id="timeline">
              <h2>Timeline</h2>
              <RunTimeline detail={detail} now={now} />
            </section>
            <StuckHistory detail={detail} now={now} />
            <TimingPolicy detail={detail} now={now} />
            <section id="steps">
              <h2>Steps</h2>
              <StepsTable steps={actions} childRunIds={childRunIds(events)} now={now} />
            </section>
            {compensations.length > 0 ? (
              <section id="compensations" data-testid="compensations">
                <h2>Compensations</h2>
                <CompensationsTable compensations={compensations} steps={actions} now={now} />
              </section>
            ) : null}
            {anomalies.length > 0 ? (
              <section id="anomalies" data-testid="anomalies">
                <h2>Anomalies</h2>
                <AnomaliesTable anomalies={anomalies} />
              </section>
            ) : null}
            <section id="events">
              <h2>Events</h2>
              <EventsTimeline events={events} />
            </section>
          </>
        );
      }}
    </DetailFrame>
  );
}
