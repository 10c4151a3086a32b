import { Timestamp } from '@/ui/timestamp';
import type { InstanceSummary } from './instance-types';

/**
 * The first thing on a failing instance's page: the message it stopped (or keeps failing) on, the
 * error word for word, and what an operator can do (release is under Repairs below, for operators).
 */
export function InstanceFailureBanner({ instance, now }: { instance: InstanceSummary; now: number }) {
  const f = instance.failure;
  const quarantined = instance.status === 'QUARANTINED';
  if (!f && !quarantined) return null;
  return (
    <section className="panel panel-bad stuck-banner" role="alert" data-testid="failure-banner">
      <h2>
        {quarantined
          ? 'Quarantined: this instance stopped on a message it could not handle'
          : 'Failing: a message keeps failing on this instance'}
      </h2>
      {f ? (
        <>
          <p data-testid="failure-message-id">
            {quarantined ? 'Stopped on' : 'Failing on'} <strong>{f.messageType ?? 'a message'}</strong> with id{' '}
            <code>{f.redeliveryKey}</code>
            {f.position !== null ? <> (feed position {f.position})</> : null}, in state{' '}
            <strong>{instance.currentState}</strong>.
          </p>
          <p className="stuck-reason mono" data-testid="failure-error">
            {f.errorType}: {f.message}
          </p>
          <p className="muted">
            First failed <Timestamp iso={f.firstFailedAt} now={now} />
            {quarantined ? (
              <>
                ; quarantined <Timestamp iso={instance.updatedAt} now={now} />
              </>
            ) : null}
            .
          </p>
        </>
      ) : (
        <p>No failure record is kept for it (see the history below for the quarantine row).</p>
      )}
      <p data-testid="failure-hint">
        <strong>What to do:</strong>{' '}
        {quarantined ? (
          <>
            While quarantined it skips its own later messages (they show as skipped below) and its timers do not fire;
            other instances go on, and nothing is deleted. Fixing the cause does not resume it. Find why the message
            fails (the error above, the service logs), fix that, then <strong>release</strong> the instance: retry the
            message it stopped on, or skip it and move on (under <a href="#repairs">Repairs</a>, for operators; the
            release is audited).
          </>
        ) : (
          <>
            The message feed keeps offering it; when quarantine is on and the failure outlasts its budget, the instance
            is quarantined on it. If the failure is a bug or a bad message, fix the cause: the record clears when that
            message succeeds.
          </>
        )}
      </p>
    </section>
  );
}

/**
 * A timeout of this instance that keeps failing (ADR 0127): it records nothing in the failure record
 * and never quarantines the instance (seed 002), so it is said here, from its timer: which timeout,
 * the error word for word, how often it was tried and when it is tried next.
 */
export function FailingTimeoutBanner({ instance, now }: { instance: InstanceSummary; now: number }) {
  const t = instance.failingTimeout;
  if (!t) return null;
  return (
    <section className="panel panel-bad stuck-banner" role="alert" data-testid="failing-timeout-banner">
      <h2>Failing: a timeout keeps failing on this instance</h2>
      <p>
        Timeout <strong>{t.name}</strong> (due <Timestamp iso={t.dueAt} now={now} />) threw on each of its {t.attempts}{' '}
        {t.attempts === 1 ? 'attempt' : 'attempts'}
        {t.failingTimeouts > 1 ? <> ({t.failingTimeouts - 1} more of its timeouts are failing too)</> : null}, in state{' '}
        <strong>{instance.currentState}</strong>.
      </p>
      <p className="stuck-reason mono" data-testid="failing-timeout-error">
        {t.lastError}
      </p>
      <p className="muted">
        {t.firstFailedAt ? (
          <>
            First failed <Timestamp iso={t.firstFailedAt} now={now} />;{' '}
          </>
        ) : null}
        {t.nextRetryAt ? (
          <>
            next try <Timestamp iso={t.nextRetryAt} now={now} />.
          </>
        ) : null}
      </p>
      <p>
        <strong>What to do:</strong> it is tried again with growing delays (up to the engine&apos;s{' '}
        <code>timeout_retry_max_seconds</code>) for as long as it fails, and never quarantines the instance. Fix the
        cause (the error above, the service logs): its next try then delivers it once. To decide the deadline now
        instead, run one of the process&apos;s commands or a forced transition (under <a href="#repairs">Repairs</a>).
      </p>
    </section>
  );
}
