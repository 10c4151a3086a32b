import { apiErrorInfo } from '@/trpc/api-error';
import { ErrorPanel } from '@/ui/error-panel';

/** Why an instance page has nothing to show: no such instance, not an id, or the API is failing. */
export function InstanceLoadError({ id, error, onRetry }: { id: string; error: unknown; onRetry: () => void }) {
  const info = apiErrorInfo(error);
  const back = { backHref: '/instances', backLabel: 'Back to all instances' };
  if (info.code === 'NOT_FOUND') {
    return (
      <ErrorPanel title="Instance not found" {...back} testId="instance-not-found">
        <p>
          There is no instance with id <code>{id}</code>. Check the link, or find the instance in the list.
        </p>
      </ErrorPanel>
    );
  }
  if (info.code === 'BAD_REQUEST') {
    return (
      <ErrorPanel title="Not an instance id" {...back} testId="instance-not-found">
        <p>
          <code>{id}</code> is not a valid instance id ({info.message}).
        </p>
      </ErrorPanel>
    );
  }
  return (
    <ErrorPanel title="Could not load this instance" onRetry={onRetry} {...back}>
      <p>{info.message}</p>
    </ErrorPanel>
  );
}
