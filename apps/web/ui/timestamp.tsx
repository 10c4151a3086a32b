import { formatAge, formatDateTime } from './format-time';

/** An absolute local time with its age beside it; the UTC instant is in the tooltip. */
export function Timestamp({ iso, now, showAge = true }: { iso: string | null; now: number; showAge?: boolean }) {
  if (!iso) return <span className="muted">—</span>;
  return (
    <time dateTime={iso} title={`${iso} (UTC)`}>
      {formatDateTime(iso)}
      {showAge ? <span className="muted"> · {formatAge(iso, now)}</span> : null}
    </time>
  );
}
