'use client';

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
import { LoadOlder } from '@/ui/load-older';
import { RunStuckBanner } from './run-stuck-banner';
import { RunTimeline, StuckHistory } from './run-timeline';
import { StepsTable } from './steps-table';
import { TimingPolicy } from './timing-policy';
import { useRunHistory, type HistoryPart } from './use-run-history';

/**
 * One run: why it is stuck (if it is) with its safe repairs, header, the timeline of its steps
 * (attempts, events, anomalies and compensations where they happened), when it was stuck, the
 * timing policy it runs under, steps, compensations, anomalies and events. It opens with the newest
 * page of each part and loads older pages on request; until the run reaches a terminal status it
 * polls every second for what is newer than what it holds (ADR 0035).
 */
export function RunDetailView({ id }: { id: string }) {
  const now = useNow();
  const { query: detail, loadOlder, loading, loadError } = useRunHistory(id);
  return (
    <DetailFrame
      back={{ href: '/runs', label: 'All runs' }}
      query={detail}
      pendingLabel={`Loading run ${id}…`}
      loadError={(error, retry) => <RunLoadError id={id} error={error} onRetry={retry} />}
    >
      {(detail) => {
        const { run, actions, compensations, anomalies, events, older } = detail;
        const olderOf = (part: HistoryPart, shown: number) => ({
          part,
          noun: part,
          shown,
          more: older[part],
          loading: loading === part,
          onLoad: () => void loadOlder(part),
        });
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
            {loadError ? (
              <p className="notice notice-bad" role="alert">
                Loading older rows failed: {loadError}
              </p>
            ) : null}
            <section id="steps">
              <h2>Steps</h2>
              <LoadOlder {...olderOf('steps', actions.length)} />
              <StepsTable steps={actions} childRunIds={childRunIds(events)} now={now} runEndedAt={run.finishedAt} />
            </section>
            {compensations.length > 0 ? (
              <section id="compensations" data-testid="compensations">
                <h2>Compensations</h2>
                <LoadOlder {...olderOf('compensations', compensations.length)} />
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
              <LoadOlder {...olderOf('events', events.length)} />
              <EventsTimeline events={events} />
            </section>
          </>
        );
      }}
    </DetailFrame>
  );
}
