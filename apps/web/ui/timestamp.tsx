import { formatDateTime, formatRelative } from './format-time';

/** An absolute local time with its zone and how far it is from now ("3 min ago", "in 20 s"); the UTC instant is in the tooltip. */
export function Timestamp({ iso, now, showAge = true }: { iso: string | null; now: number; showAge?: boolean }) {
  if (!iso) return <span className="muted">—</span>;
  return (
    <time dateTime={iso} title={`${iso} (UTC)`}>
      {formatDateTime(iso)}
      {showAge ? <span className="muted"> · {formatRelative(iso, now)}</span> : null}
    </time>
  );
}
