import type { Db } from './types.ts';

export interface DbDueTimeout {
  id: string;
  instance_id: string;
  process_name: string;
  name: string;
  expected_state: string;
  armed_visit: number;
  payload: unknown;
  attempts: number;
}

/**
 * Claims one due timeout for the rest of the caller's transaction, and locks its instance for the
 * delivery that follows. SKIP LOCKED lets any number of schedulers sweep at once, and passes over a
 * timer whose instance another transaction holds (a delivery, a release, a host's open transaction):
 * it is claimed on a later pass, and this pass goes on with the others instead of waiting (review 29).
 * A quarantined instance's timers are not claimed: they stay armed.
 *
 * `due_at <= now` bounds the walk of the armed timers' index (due_at, id): without it the test on
 * `coalesce(retry_at, due_at)` bounds nothing, and a pass's last claim, which finds nothing due,
 * read every armed timer to the index's end. It drops no due timer: retry_at is only set by a failed
 * delivery, to the failing pass's now plus the retry interval, so it is never before due_at.
 */
export async function claimDueProcessTimeout(
  db: Db,
  args: { now: Date; processNames: readonly string[] },
): Promise<DbDueTimeout | null> {
  const rows = await db.$queryRaw<DbDueTimeout[]>`
    select t.id::text as id, t.instance_id::text as instance_id, i.process_name, t.name, t.expected_state, t.armed_visit,
           t.payload, t.attempts
      from "sagaflow"."process_timeouts" t
      join "sagaflow"."saga_instances" i on i.id = t.instance_id
     where t.status = 'Pending'
       and t.due_at <= ${args.now}::timestamptz
       and coalesce(t.retry_at, t.due_at) <= ${args.now}::timestamptz
       and i.status <> 'QUARANTINED'
       and i.process_name = any(${args.processNames}::text[])
     order by t.due_at, t.id
     limit 1
       for update of t, i skip locked`;
  return rows[0] ?? null;
}
