import { apiErrorInfo } from '@/trpc/api-error';
import { ErrorPanel } from '@/ui/error-panel';

/** Why a run page has nothing to show: no such run, not a run id, or the API is failing. */
export function RunLoadError({ id, error, onRetry }: { id: string; error: unknown; onRetry: () => void }) {
  const info = apiErrorInfo(error);
  if (info.code === 'NOT_FOUND') {
    return (
      <ErrorPanel title="Run not found" backHref="/runs" testId="run-not-found">
        <p>
          There is no run with id <code>{id}</code>. Check the link, or find the run in the list.
        </p>
      </ErrorPanel>
    );
  }
  if (info.code === 'BAD_REQUEST') {
    return (
      <ErrorPanel title="Not a run id" backHref="/runs" testId="run-not-found">
        <p>
          <code>{id}</code> is not a valid run id ({info.message}).
        </p>
      </ErrorPanel>
    );
  }
  return (
    <ErrorPanel title="Could not load this run" onRetry={onRetry} backHref="/runs">
      <p>{info.message}</p>
    </ErrorPanel>
  );
}
