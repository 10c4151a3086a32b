import { z } from 'zod';

/** The earliest instant a time filter or cursor may name: PostgreSQL has no year 0 (1 BC) to compare with. */
const earliest = '0001-01-01T00:00:00Z';
const earliestMs = Date.parse(earliest);

/**
 * An ISO date-time (with an offset when `offset` is set) that PostgreSQL's timestamptz can hold once
 * read as UTC, for any time sent to the database (filters, cursors). ISO and `z.iso.datetime` accept
 * year 0000, and a year-0001 time whose offset moves it into year 0; the database refuses both, which
 * was a 500 (review 31). Refused as a 400 naming the field, like `storableText`.
 *
 * @example
 * z.object({ from: storableTime({ offset: true }).optional() });
 */
export const storableTime = (opts: { offset?: boolean } = {}) =>
  z.iso
    .datetime(opts)
    .refine(
      (s) => Date.parse(s) >= earliestMs,
      `must be at or after ${earliest}, the earliest time the database holds`,
    );
