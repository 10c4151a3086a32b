const pad = (n: number) => String(n).padStart(2, '0');

/** An x-axis label for a bucket start: "14:05" per minute, "Mon 14:00" per hour (local time). */
export function bucketLabel(iso: string, bucket: 'minute' | 'hour'): string {
  const d = new Date(iso);
  const clock = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return bucket === 'minute' ? clock : `${d.toLocaleDateString('en-GB', { weekday: 'short' })} ${clock}`;
}

/** "42 s", "12 min", "3.5 h", "2.1 d": an age on an axis, short. */
export function shortSeconds(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.round((seconds / 3600) * 10) / 10} h`;
  return `${Math.round((seconds / 86_400) * 10) / 10} d`;
}
