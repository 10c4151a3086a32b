import { formatClock } from './format-time';

/** "10:42:13.120" for tables where order within a second matters; the full instant in the tooltip. */
export function ClockTime({ iso }: { iso: string | null }) {
  if (!iso) return <span className="muted">—</span>;
  return (
    <time dateTime={iso} title={iso}>
      {formatClock(iso, true)}
    </time>
  );
}
