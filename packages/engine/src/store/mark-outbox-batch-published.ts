import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

/**
 * Records that the broker or handler acknowledged these rows, all in one statement (one round trip
 * per batch, not per row: ADR 0026). Conditional on Pending only, not on the claim's attempt: the
 * messages WERE delivered, whoever's claim they were. A row another session holds (an operator's
 * requeue, a host's open transaction, a psql `FOR UPDATE`) is skipped, not waited for: the publisher
 * sends its marks one after another, so one held row used to keep every later source's rows from
 * being marked, each sent again and again, and the publisher's stop hung on it (review 54). Returns
 * the ids it marked, and the ids it skipped as held (still Pending: sent again after their claim
 * window). A delivered id in neither was already Published (a rival's duplicate got there first) or Dead.
 */
export async function markOutboxBatchPublished(
  db: Db,
  args: { ids: string[]; now: Date },
): Promise<{ marked: Set<string>; held: Set<string> }> {
  if (args.ids.length === 0) return { marked: new Set(), held: new Set() };
  // The ids through a subquery: no plan knows the batch's length, so the generic one is kept (ADR 0098).
  const rows = await db.$queryRaw<{ id: string; marked: boolean }[]>`
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
  const marked = new Set<string>();
  const held = new Set<string>();
  for (const row of rows) (row.marked ? marked : held).add(row.id);
  return { marked, held };
}
