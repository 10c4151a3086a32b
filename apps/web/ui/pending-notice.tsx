import { apiErrorInfo } from '@/trpc/api-error';

/** "Loading…", or, once a try has failed and another is coming, why it is taking long. */
export function PendingNotice({
  label,
  failureCount,
  failureReason,
}: {
  label: string;
  failureCount: number;
  failureReason: unknown;
}) {
  if (failureCount === 0 || failureReason === null || failureReason === undefined)
    return <p className="muted">{label}</p>;
  return (
    <p className="notice notice-bad" role="alert">
      Still trying ({failureCount} failed {failureCount === 1 ? 'attempt' : 'attempts'}):{' '}
      {apiErrorInfo(failureReason).message}
    </p>
  );
}
