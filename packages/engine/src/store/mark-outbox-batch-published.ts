import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

/**
 * Records that the broker or handler acknowledged these rows, all in one statement (one round trip
 * per batch, not per row: ADR 0026). Conditional on Pending only, not on the claim's attempt: the
 * messages WERE delivered, whoever's claim they were. Returns the ids it marked; a delivered id
 * missing from it was already Published (a rival's duplicate got there first) or Dead.
 */
export async function markOutboxBatchPublished(db: Db, args: { ids: string[]; now: Date }): Promise<Set<string>> {
  if (args.ids.length === 0) return new Set();
  // The ids through a subquery: no plan knows the batch's length, so the generic one is kept (ADR 0098).
  const rows = await db.$queryRaw<{ id: string }[]>`
    update "sagaflow"."outbox"
       set status = 'Published', published_at = ${args.now}::timestamptz
     where id = any((select ${args.ids}::uuid[])::uuid[]) and ${statusIn('status', ['Pending'])}
    returning id::text as id`;
  return new Set(rows.map((row) => row.id));
}
