import { z } from 'zod';
import { storableTime } from '../storable-time.ts';

/**
 * A newest-first keyset cursor for journals that are read backwards in time (anomalies, the audit
 * trail): the last row's time and a key that breaks ties on it. Opaque to callers (base64url JSON).
 */
export interface TimeCursor {
  at: Date;
  key: string;
}

export function encodeTimeCursor(c: TimeCursor): string {
  return Buffer.from(JSON.stringify({ t: c.at.toISOString(), k: c.key })).toString('base64url');
}

/**
 * The `cursor` input whose key `key` accepts (a pattern, and any bound the column sets, such as
 * `bigintIdKey`'s): a string this API handed out, or a 400 naming input.cursor.
 */
export function timeCursorInput(key: z.ZodType<string>) {
  const shape = z.object({ t: storableTime(), k: key });
  return z
    .string()
    .min(1)
    .max(400)
    .transform((text, ctx): TimeCursor => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
      } catch {
        parsed = undefined;
      }
      const result = shape.safeParse(parsed);
      if (!result.success) {
        ctx.addIssue({
          code: 'custom',
          message: 'not a cursor this API handed out; pass a previous page nextCursor unchanged, or omit it',
        });
        return z.NEVER;
      }
      return { at: new Date(result.data.t), key: result.data.k };
    });
}

/** An ISO time with its offset, as the `from` / `to` filters of a journal take it (and a run's `createdFrom`). */
export const isoTimeInput = storableTime({ offset: true });

/** Refuses a time range whose end is before its start, naming `to`. */
export function checkTimeRange(input: { from?: string | undefined; to?: string | undefined }, ctx: z.RefinementCtx) {
  if (input.from !== undefined && input.to !== undefined && Date.parse(input.from) > Date.parse(input.to))
    ctx.addIssue({ code: 'custom', path: ['to'], message: 'must not be before from' });
}
