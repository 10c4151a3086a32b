import { formatDateTime, formatTimeOfDay } from './format-time';

/**
 * "10:42:13.120 UTC" for tables where order within a second matters, with its zone like every absolute
 * time the console shows (review 42); the full date and the UTC instant in the tooltip.
 */
export function ClockTime({ iso }: { iso: string | null }) {
  if (!iso) return <span className="muted">—</span>;
  return (
    <time dateTime={iso} title={`${formatDateTime(iso)} · ${iso}`}>
      {formatTimeOfDay(iso, true)}
    </time>
  );
}
