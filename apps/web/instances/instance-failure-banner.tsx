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
