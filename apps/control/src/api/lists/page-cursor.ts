import { z } from 'zod';
import { storableText } from '../storable-text.ts';
import { storableTime } from '../storable-time.ts';

/**
 * A keyset cursor: the sort key and id of the last row a page showed, and the order it was read
 * in. Opaque to callers (base64url JSON); a cursor read in another order is refused, because its
 * position means nothing there.
 */
export interface PageCursor {
  order: 'newest' | 'stalest';
  at: Date;
  id: string;
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (s: string) => uuid.test(s);

const cursorShape = z.object({
  o: z.enum(['newest', 'stalest']),
  t: storableTime(),
  id: z.string().regex(uuid),
});

export function encodeCursor(c: PageCursor): string {
  return Buffer.from(JSON.stringify({ o: c.order, t: c.at.toISOString(), id: c.id })).toString('base64url');
}

/** The `cursor` input: a string this API handed out as `nextCursor`, or a 400 naming input.cursor. */
export const cursorInput = z
  .string()
  .min(1)
  .max(400)
  .transform((text, ctx): PageCursor => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    } catch {
      parsed = undefined;
    }
    const result = cursorShape.safeParse(parsed);
    if (!result.success) {
      ctx.addIssue({
        code: 'custom',
        message: 'not a cursor this API handed out; pass a previous page nextCursor unchanged, or omit it',
      });
      return z.NEVER;
    }
    return { order: result.data.o, at: new Date(result.data.t), id: result.data.id };
  });

/** Counts stop at this many (shown as "10000+"): a count is an index range scan, never the table. */
export const countCap = 10_000;

/** The `staleForSeconds` input: not updated for at least this long. */
export const staleForSecondsInput = z
  .number()
  .int()
  .min(0)
  .max(366 * 24 * 3600);

/** Search text: an id (UUID) or a business / correlation key, matched exactly; text the database holds as given. */
export const searchInput = z.string().trim().pipe(storableText(500).min(1));
