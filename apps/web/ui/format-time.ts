const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * The browser's time zone at `iso` as an offset from UTC: "UTC", "UTC+05:30", "UTC-04:00" (review 42:
 * a wall-clock time without its zone cannot be compared with a UTC log or a colleague's screenshot).
 * An offset rather than a zone name: names are ambiguous ("IST") and depend on the browser's language.
 */
export function formatZone(iso: string): string {
  return formatUtcOffset(-new Date(iso).getTimezoneOffset());
}

/** "UTC" for 0, "UTC+05:30" for 330 minutes east of Greenwich, "UTC-04:00" for 240 west. */
export function formatUtcOffset(minutesEast: number): string {
  if (minutesEast === 0) return 'UTC';
  const abs = Math.abs(minutesEast);
  return `UTC${minutesEast > 0 ? '+' : '-'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** Local wall-clock time with its zone, "2025-11-30 03:12:45 UTC+05:30", unambiguous at a glance. */
export function formatDateTime(iso: string): string {
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${formatClock(iso)} ${formatZone(iso)}`;
}

/** "03:12:45.120", the bare clock (no zone): for building the texts below; not shown alone. */
export function formatClock(iso: string, withMillis = false): string {
  const d = new Date(iso);
  const base = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return withMillis ? `${base}.${pad(d.getMilliseconds(), 3)}` : base;
}

/** "03:12:45 UTC+05:30", or "03:12:45.120 UTC" where order within a second matters: a time of day with its zone. */
export function formatTimeOfDay(iso: string, withMillis = false): string {
  return `${formatClock(iso, withMillis)} ${formatZone(iso)}`;
}

/** A time of day with its zone for a moment the console itself saw (a refresh), from epoch milliseconds. */
export function formatMoment(ms: number): string {
  return formatTimeOfDay(new Date(ms).toISOString());
}

/** "340 ms", "4.2 s", "3 min 4 s", "2 h 5 min", "3 d 4 h". */
export function formatDuration(ms: number): string {
  const abs = Math.max(0, ms);
  if (abs < 1000) return `${Math.round(abs)} ms`;
  const s = abs / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min ${Math.floor(s % 60)} s`;
  const h = Math.floor(min / 60);
  if (h < 48) return `${h} h ${min % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** "12 s ago" relative to `now` ("just now" under a second, clocks being slightly apart). */
export function formatAge(iso: string, now: number): string {
  const ms = now - new Date(iso).getTime();
  return ms < 1000 ? 'just now' : `${formatDuration(ms)} ago`;
}

/** "in 23 s" for a time still ahead of `now`, "12 s ago" for one behind it, "just now" within a second. */
export function formatRelative(iso: string, now: number): string {
  const ms = new Date(iso).getTime() - now;
  if (Math.abs(ms) < 1000) return 'just now';
  return ms > 0 ? `in ${formatDuration(ms)}` : `${formatDuration(-ms)} ago`;
}

/** "10:42:13 UTC" when `iso` falls on the same local day as `now`, the full date and time otherwise; with the zone. */
export function formatNear(iso: string, now: number): string {
  return new Date(iso).toDateString() === new Date(now).toDateString() ? formatTimeOfDay(iso) : formatDateTime(iso);
}

/** How long something took (or has taken so far, if it has not finished); "—" if it never started. */
export function formatSpan(startedAt: string | null, finishedAt: string | null, now: number): string {
  if (!startedAt) return '—';
  return formatDuration((finishedAt ? new Date(finishedAt).getTime() : now) - new Date(startedAt).getTime());
}
