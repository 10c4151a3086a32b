import { JsonBlock } from '@/ui/json-block';
import { errorMessage } from './error-message';

/** A recorded error: its message in plain words first, the full record (stack included) one click away. */
export function RecordedError({ error }: { error: unknown }) {
  const message = errorMessage(error);
  if (message === null) return <JsonBlock value={error} tone="bad" />;
  return (
    <div className="recorded-error">
      <p className="text-bad" data-testid="run-error-message">
        {message}
      </p>
      <details>
        <summary>Full error record</summary>
        <JsonBlock value={error} tone="bad" />
      </details>
    </div>
  );
}
