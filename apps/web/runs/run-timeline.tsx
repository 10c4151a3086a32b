import type { RunDetail } from '@/trpc/api-types';
import { ClockTime } from '@/ui/clock-time';
import { formatSpan } from '@/ui/format-time';
import { JsonInline } from '@/ui/json-block';
import { StatusBadge } from '@/ui/status-badge';
import { InFlightTag, inFlightAtEnd } from './in-flight-tag';
import { Timestamp } from '@/ui/timestamp';
import { runTimeline, type TimelineStep } from './run-timeline-items';
import { StepKindLabel } from './step-kind-label';

type Step = RunDetail['actions'][number];

/** What a step waits for, for signals and timers: the signal's name, the timer's wake time. */
function waitNote(step: Step, now: number) {
  if (step.kind === 'timer' && step.wakeAt)
    return (
      <span className="muted">
        {' '}
        wakes <Timestamp iso={step.wakeAt} now={now} />
      </span>
    );
  if (step.kind === 'signal') return <span className="muted"> signal “{step.name}”</span>;
  return null;
}

function StepEntry({ item, now, runEndedAt }: { item: TimelineStep<Step>; now: number; runEndedAt: string | null }) {
  const { step, events, anomalies, compensations } = item;
  const inFlight = inFlightAtEnd(step.status, runEndedAt);
  return (
    <li className="tl-step" data-testid="timeline-step" data-sequence={step.sequence} data-status={step.status}>
      <div className="tl-head">
        <span className="muted">#{step.sequence}</span> <StepKindLabel kind={step.kind} /> <strong>{step.name}</strong>{' '}
        <StatusBadge status={step.status} kind="step" /> {inFlight ? <InFlightTag /> : null}{' '}
        {step.kind === 'action' ? (
          <span data-testid="timeline-attempts">
            attempt {step.attempts} of {step.maxAttempts}
          </span>
        ) : null}
        {waitNote(step, now)}{' '}
        <span className="muted">{formatSpan(step.startedAt, inFlight ? runEndedAt : step.finishedAt, now)}</span>
      </div>
      {events.length + anomalies.length > 0 ? (
        <ol className="tl-events">
          {events.map((e) => (
            <li key={`e-${e.id}`} data-testid="timeline-event" data-type={e.type}>
              <ClockTime iso={e.at} /> <span className="event-type">{e.type}</span>
              {e.data !== null && typeof e.data === 'object' && Object.keys(e.data).length > 0 ? (
                <>
                  {' '}
                  <JsonInline value={e.data} max={100} />
                </>
              ) : null}
            </li>
          ))}
          {anomalies.map((a) => (
            <li key={`a-${a.id}`} className="text-bad" data-testid="timeline-anomaly" data-code={a.code}>
              <ClockTime iso={a.at} /> <strong>anomaly {a.code}</strong>: {a.message}
            </li>
          ))}
        </ol>
      ) : null}
      {compensations.length > 0 ? (
        <ul className="tl-compensations">
          {compensations.map((c) => (
            <li key={c.id} data-testid="timeline-compensation" data-status={c.status}>
              ↩ compensated by <strong>{c.name}</strong> <StatusBadge status={c.status} kind="step" /> rollback level{' '}
              {c.rollbackLevel}, {c.attempts} attempt{c.attempts === 1 ? '' : 's'}
            </li>
          ))}
        </ul>
      ) : null}
    </li>
  );
}

/**
 * The run as a timeline: each step with its attempts, its own events and anomalies (where they
 * happened) and the compensation that undid it; steps that ran side by side grouped as one parallel
 * block; signals and timers with what they wait for; then what belongs to the run itself.
 */
export function RunTimeline({ detail, now }: { detail: RunDetail; now: number }) {
  const t = runTimeline(detail);
  return (
    <div data-testid="run-timeline">
      {t.groups.length === 0 ? <p className="empty">No step recorded yet.</p> : null}
      <ol className="tl">
        {t.groups.map((g) =>
          g.block === null ? (
            g.steps.map((item) => (
              <StepEntry key={item.step.sequence} item={item} now={now} runEndedAt={detail.run.finishedAt} />
            ))
          ) : (
            <li
              key={`block-${g.block}-${g.steps[0]?.step.sequence}`}
              className="tl-block"
              data-testid="timeline-parallel"
            >
              <span className="muted">
                parallel block {g.block}: {g.steps.length} steps side by side
              </span>
              <ol className="tl">
                {g.steps.map((item) => (
                  <StepEntry key={item.step.sequence} item={item} now={now} runEndedAt={detail.run.finishedAt} />
                ))}
              </ol>
            </li>
          ),
        )}
      </ol>
      {t.runAnomalies.length > 0 ? (
        <ul className="tl-run-anomalies">
          {t.runAnomalies.map((a) => (
            <li key={a.id} className="text-bad" data-testid="timeline-anomaly" data-code={a.code}>
              <ClockTime iso={a.at} /> <strong>anomaly {a.code}</strong> (the run): {a.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** When and why the run became stuck, and when it stopped being stuck (kept after the run ends). */
export function StuckHistory({ detail, now }: { detail: RunDetail; now: number }) {
  const { stuckPeriods } = runTimeline(detail);
  if (stuckPeriods.length === 0) return null;
  return (
    <section id="stuck-history" data-testid="stuck-history">
      <h2>Stuck history</h2>
      <ul>
        {stuckPeriods.map((p) => (
          <li key={p.at} data-testid="stuck-period">
            Stuck <Timestamp iso={p.at} now={now} />: <code className="stuck-reason">{p.reason}</code>
            {p.endedAt ? (
              <>
                {' '}
                — until <Timestamp iso={p.endedAt} now={now} />
                {p.endedBy ? <span className="muted"> ({p.endedBy})</span> : null}
              </>
            ) : (
              <strong> — still stuck</strong>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
