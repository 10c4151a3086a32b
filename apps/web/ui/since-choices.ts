/** The time ranges a journal page offers, kept in the URL as `since`; the range ends now. */
export const sinceChoices = [
  { value: '', label: 'Any time', ms: null },
  { value: '1h', label: 'Last hour', ms: 3_600_000 },
  { value: '24h', label: 'Last 24 hours', ms: 86_400_000 },
  { value: '7d', label: 'Last 7 days', ms: 604_800_000 },
] as const;

export type Since = (typeof sinceChoices)[number]['value'];

export function parseSince(raw: string | undefined): Since {
  return sinceChoices.find((c) => c.value === raw)?.value ?? '';
}

/** The `from` input for a range ending at `now`; undefined for any time. */
export function sinceFrom(since: Since, now: number): string | undefined {
  const ms = sinceChoices.find((c) => c.value === since)?.ms ?? null;
  return ms === null ? undefined : new Date(now - ms).toISOString();
}

/** A URL's first value of a search param, trimmed and cut to `max` characters. */
export function paramText(v: string | string[] | undefined, max = 200): string {
  return ((Array.isArray(v) ? v[0] : v) ?? '').trim().slice(0, max);
}
