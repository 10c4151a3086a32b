import type { RunDetail } from '@/trpc/api-types';
import { formatNear, formatRelative } from '@/ui/format-time';

/** Someone asked this run to cancel: when, why, and (while it is open) that it has not stopped yet. */
export function RunCancelNotice({ run, open, now }: { run: RunDetail['run']; open: boolean; now: number }) {
  if (!run.cancelRequestedAt) return null;
  return (
    <p className={open ? 'notice notice-warn' : 'notice notice-muted'} data-testid="cancel-requested">
      <strong>Cancellation requested</strong> at{' '}
      <time dateTime={run.cancelRequestedAt} title={run.cancelRequestedAt}>
        {formatNear(run.cancelRequestedAt, now)}
      </time>{' '}
      <span className="muted">({formatRelative(run.cancelRequestedAt, now)})</span>
      {run.cancelReason ? <> · reason: “{run.cancelReason}”</> : ' · no reason given'}
      {open ? '. The run has not stopped yet.' : null}
    </p>
  );
}
