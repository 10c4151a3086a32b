import { formatAge } from '@/ui/format-time';
import type { InstanceFailure } from './instance-types';

/** One line for a table cell: what the instance is failing on, and since when. */
export function FailureSummary({ failure, now }: { failure: InstanceFailure | null; now: number }) {
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
