import type { RunSummary } from '@/trpc/api-types';
import { stuckHint } from './stuck-hint';
import { WaitingForText } from './waiting-for-text';

/**
 * Why a run is where it is, in one cell: a stuck reason loudly (its code in bold), what it waits
 * for quietly, and for a finished run the error it ended with.
 */
export function RunReason({ run, now }: { run: RunSummary; now: number }) {
  if (run.stuckReason) {
    const { code } = stuckHint(run.stuckReason);
    return (
      <span className="stuck reason-clamp" title={run.stuckReason} data-testid="run-stuck-reason">
        {code ? (
          <>
            <strong>{code}:</strong>
            {run.stuckReason.slice(code.length + 1)}
          </>
        ) : (
          <strong>{run.stuckReason}</strong>
        )}
      </span>
    );
  }
  const cancel = run.cancelRequestedAt && !run.finishedAt ? <span className="muted">cancel requested · </span> : null;
  if (run.waitingFor)
    return (
      <span className="muted" data-testid="run-waiting-for">
        {cancel}
        <WaitingForText text={run.waitingFor} now={now} />
      </span>
    );
  if (run.finishedAt && run.errorMessage !== null) {
    const message = run.errorMessage;
    return (
      <span className="error-line reason-clamp" title={message} data-testid="run-error">
        {message}
      </span>
    );
  }
  return cancel ?? <span className="muted">—</span>;
}
