import { formatAge, formatRelative } from '@/ui/format-time';
import type { InstanceFailure, InstanceFailingTimeout } from './instance-types';

/**
 * One line for a table cell: what the instance is failing on, and since when: its failure record (a
 * message, seed 002), else a timeout that keeps failing (ADR 0127: it records nothing in the failure
 * record and never quarantines, so it is shown from the timer).
 */
export function FailureSummary({
  failure,
  failingTimeout = null,
  now,
}: {
  failure: InstanceFailure | null;
  failingTimeout?: InstanceFailingTimeout | null;
  now: number;
}) {
  if (!failure && failingTimeout) return <FailingTimeoutSummary timeout={failingTimeout} now={now} />;
  if (!failure) return <span className="muted">—</span>;
  const text = `${failure.errorType}: ${failure.message}`;
  return (
    <span className="failure-summary" data-testid="failure-summary">
      <span className="text-bad reason-clamp" title={text}>
        {text}
      </span>
      <span className="muted">
        {' '}
        on {failure.messageType ?? 'message'} <code>{failure.redeliveryKey}</code> · failing since{' '}
        {formatAge(failure.firstFailedAt, now)}
      </span>
    </span>
  );
}

function FailingTimeoutSummary({ timeout: t, now }: { timeout: InstanceFailingTimeout; now: number }) {
  return (
    <span className="failure-summary" data-testid="failing-timeout-summary">
      <span className="text-bad reason-clamp" title={t.lastError}>
        {t.lastError}
      </span>
      <span className="muted">
        {' '}
        on timeout <code>{t.name}</code> · {t.attempts} {t.attempts === 1 ? 'attempt' : 'attempts'}
        {t.firstFailedAt ? <> · failing since {formatAge(t.firstFailedAt, now)}</> : null}
        {t.nextRetryAt ? <> · next try {formatRelative(t.nextRetryAt, now)}</> : null}
      </span>
    </span>
  );
}
