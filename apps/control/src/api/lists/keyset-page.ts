import type { z } from 'zod';
import { storableText } from '../storable-text.ts';
import { countCap, encodeCursor, isUuid, type PageCursor } from './page-cursor.ts';

/**
 * A filter's name input (flow, process, state, actor, target): 1 to 200 characters the database
 * compares as given. NUL and lone surrogates are refused naming the field, never searched for as the
 * U+FFFD the driver would turn them into (review 31).
 */
export const nameInput = storableText(200).min(1);

/** A cursor must have been read in the order asked for now; else its position means nothing. */
export function checkCursorOrder(
  input: { cursor?: PageCursor | undefined; order: PageCursor['order'] },
  ctx: z.RefinementCtx,
): void {
  if (input.cursor && input.cursor.order !== input.order)
    ctx.addIssue({
      code: 'custom',
      path: ['cursor'],
      message: `this cursor was read in ${input.cursor.order} order, not ${input.order}; start again without it`,
    });
}

/** The sort of an order: newest by (created_at, id) descending, stalest by (updated_at, id) ascending. */
export function keysetOrder(order: PageCursor['order']) {
  return order === 'newest'
    ? [{ created_at: 'desc' as const }, { id: 'desc' as const }]
    : [{ updated_at: 'asc' as const }, { id: 'asc' as const }];
}

/**
 * The rows after a cursor, in its order (ties on the time broken by id). The plain bound on the time
 * (`<=` or `>=`) is implied by the OR, but it is what the planner can use as the index scan's start:
 * without it a page 500 k rows deep walks the index from its first entry to the cursor (ADR 0032).
 */
export function afterCursor(cursor: PageCursor) {
  return cursor.order === 'newest'
    ? {
        created_at: { lte: cursor.at },
        OR: [{ created_at: { lt: cursor.at } }, { created_at: cursor.at, id: { lt: cursor.id } }],
      }
    : {
        updated_at: { gte: cursor.at },
        OR: [{ updated_at: { gt: cursor.at } }, { updated_at: cursor.at, id: { gt: cursor.id } }],
      };
}

/** A search for an id (UUID-shaped text) or, exactly, a key column's value. */
export function idOrKey<K extends string>(search: string, keyColumn: K) {
  const byKey = { [keyColumn]: search } as Record<K, string>;
  return isUuid(search) ? { OR: [{ id: search.toLowerCase() }, byKey] } : byKey;
}

/** Cuts `limit + 1` rows read to a page, with the cursor of its last row when more follow. */
export function finishPage<R extends { id: string; created_at: Date; updated_at: Date }>(
  rows: R[],
  limit: number,
  order: PageCursor['order'],
): { page: R[]; nextCursor: string | null } {
  const page = rows.length > limit ? rows.slice(0, limit) : rows;
  const last = page.at(-1);
  return {
    page,
    nextCursor:
      rows.length > limit && last
        ? encodeCursor({ order, at: order === 'newest' ? last.created_at : last.updated_at, id: last.id })
        : null,
  };
}

/**
 * One capped count per status (`count(...)` gets `take: countCap + 1`), as a record. The caller
 * orders each count by the status it counts (`orderBy: { status: 'asc' }`): given `take` and no
 * order, Prisma orders the count's subquery by id, which reads the primary key in id order and
 * filters every row by status, a walk of the whole table for a status with few rows. An order on a
 * column the filter fixes is one PostgreSQL drops, so the planner is free to read the index that
 * fits the rest of the filter and stop at the cap (ADR 0032). Ordering by the list's own key instead
 * tied the count to that key's index: 78 k rows read for a rare status within one flow at 1 M runs.
 */
export async function cappedCounts<S extends string>(
  statuses: readonly S[],
  count: (status: S, take: number) => Promise<number>,
): Promise<Record<S, number>> {
  const counted = await Promise.all(statuses.map((s) => count(s, countCap + 1)));
  return Object.fromEntries(statuses.map((s, i) => [s, Math.min(counted[i] ?? 0, countCap)])) as Record<S, number>;
}
