import { instanceTone } from './instances-filter';

/** ACTIVE / COMPLETED / QUARANTINED on a coloured pill; the word stays readable without the colour. */
export function InstanceStatusBadge({ status, testId }: { status: string; testId?: string }) {
  return (
    <span className={`badge badge-${instanceTone(status)}`} data-testid={testId}>
      {status}
    </span>
  );
}
