import type { PrismaClient } from '../generated/prisma/client.ts';
import { isLockWaitGivenUp } from '../process/process-deps.ts';
import { inSweepTransaction } from '../sweeps/in-sweep-transaction.ts';
import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

/**
 * Records that the broker or handler acknowledged these rows, all in one statement (one round trip
 * per batch, not per row: ADR 0026). Conditional on Pending only, not on the claim's attempt: the
 * messages WERE delivered, whoever's claim they were. Returns the ids it marked; a delivered id
 * missing from it was already Published (a rival's duplicate got there first) or Dead.
 *
 * A row another session holds is waited for at most `lockWaitMs` (the transaction's `lock_timeout`):
 * a requeue's or a rival's short transaction is waited out, as before. Past it, the mark is sent again
 * skipping the rows it cannot lock (`held`: still Pending, sent again after their claim window). The
 * publisher sends its marks one after another, so one row held for long (a host's open transaction, a
 * psql `FOR UPDATE`) used to keep every later source's rows from being marked, each sent again and
 * again, and hung the publisher's stop (review 54, ADR 0131).
 */
export async function markOutboxBatchPublished(
  prisma: PrismaClient,
  args: { ids: string[]; now: Date; lockWaitMs: number; timeoutMs: number },
): Promise<{ marked: Set<string>; held: Set<string> }> {
  if (args.ids.length === 0) return { marked: new Set(), held: new Set() };
  try {
    const rows = await inSweepTransaction(prisma, args.timeoutMs, (tx) => markWaiting(tx, args), {
      lock_timeout: String(args.lockWaitMs),
    });
    return { marked: new Set(rows.map((row) => row.id)), held: new Set() };
  } catch (err) {
    if (!isLockWaitGivenUp(err)) throw err;
  }
  const rows = await markSkippingHeld(prisma, args);
  const marked = new Set<string>();
  const held = new Set<string>();
  for (const row of rows) (row.marked ? marked : held).add(row.id);
  return { marked, held };
}

function markWaiting(db: Db, args: { ids: string[]; now: Date }) {
  // The ids through a subquery: no plan knows the batch's length, so the generic one is kept (ADR 0098).
  return db.$queryRaw<{ id: string }[]>`
    update "sagaflow"."outbox"
       set status = 'Published', published_at = ${args.now}::timestamptz
     where id = any((select ${args.ids}::uuid[])::uuid[]) and ${statusIn('status', ['Pending'])}
    returning id::text as id`;
}

/** The same mark, skipping the rows another session holds and naming them. */
function markSkippingHeld(db: Db, args: { ids: string[]; now: Date }) {
  return db.$queryRaw<{ id: string; marked: boolean }[]>`
    with wanted as (
      select id from "sagaflow"."outbox"
       where id = any((select ${args.ids}::uuid[])::uuid[]) and ${statusIn('status', ['Pending'])}
    ), mine as (
      select o.id from "sagaflow"."outbox" o
       where o.id = any((select array_agg(id) from wanted)::uuid[]) and ${statusIn('o.status', ['Pending'])}
         for update skip locked
    ), done as (
      update "sagaflow"."outbox" o
         set status = 'Published', published_at = ${args.now}::timestamptz
        from mine where o.id = mine.id
      returning o.id
    )
    select id::text as id, true as marked from done
    union all
    select w.id::text, false from wanted w where not exists (select 1 from mine m where m.id = w.id)`;
}
