/** The value of the decimal digits of `text` from `start` to `end`, or -1 if one is not a digit. */
function digits(text: string, start: number, end: number): number {
  let value = 0;
  for (let i = start; i < end; i += 1) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

const dash = 45;
const space = 32;
const colon = 58;
const dot = 46;
const plus = 43;

/**
 * The wall-clock time a server prints as `YYYY-MM-DD HH:MM:SS[.f…]` (then, `withOffset`, an offset
 * `±HH` or `±HH:MM`, which is dropped), taken as UTC: what `new Date()` gives for the same text with a
 * `T` and `+00:00` (the raw path's Prisma-compatible reading, raw-values.ts), read with `Date.UTC`
 * instead of through the string parser, at a quarter of its cost (every row of a run's step carries
 * several timestamps). Undefined for any other shape (a year before 100 or after 9999, BC, infinity,
 * more than six fractional digits): the caller then parses the text as before.
 */
export function wallClockAsUtc(text: string, withOffset: boolean): Date | undefined {
  if (
    text.length < 19 ||
    text.charCodeAt(4) !== dash ||
    text.charCodeAt(7) !== dash ||
    text.charCodeAt(10) !== space ||
    text.charCodeAt(13) !== colon ||
    text.charCodeAt(16) !== colon
  )
    return undefined;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  // Date.UTC reads a year below 100 as 1900 plus it.
  if (year < 100 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return undefined;
  let i = 19;
  let ms = 0;
  if (text.charCodeAt(i) === dot) {
    const start = i + 1;
    i = start;
    while (i < text.length && i - start < 7 && digits(text, i, i + 1) >= 0) i += 1;
    const count = i - start;
    if (count === 0 || count > 6) return undefined;
    // Milliseconds are the first three digits (fewer padded with zeros), the rest cut off, as the parser does.
    ms = count >= 3 ? digits(text, start, start + 3) : digits(text, start, i) * (count === 1 ? 100 : 10);
  }
  if (i < text.length) {
    const sign = text.charCodeAt(i);
    if (!withOffset || (sign !== plus && sign !== dash) || digits(text, i + 1, i + 3) < 0) return undefined;
    const rest = text.length - (i + 3);
    if (rest !== 0 && (rest !== 3 || text.charCodeAt(i + 3) !== colon || digits(text, i + 4, i + 6) < 0))
      return undefined;
  }
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms));
}
