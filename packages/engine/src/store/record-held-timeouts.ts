import { statusIn } from './keyed-status.ts';
import type { Db } from './types.ts';

/**
 * Records, once per timer, that a due timeout of a quarantined instance was held back: a
 * `skipped_quarantined` history row named after the timeout. The timeout itself stays Pending
 * (armed); it fires after a release. Returns how many were newly recorded.
 *
 * An instance another transaction holds (a delivery to it, a release) is passed over: its timers are
 * noted on a later pass. Without SKIP LOCKED the insert's foreign-key check waited for that
 * transaction, and the whole timeout pass with it (review 29).
 *
 * The due timers are looked up by their status (the armed timers' index is the path); each one's
 * instance by its id, its status tested through `status_in` (ADR 0098). A plain `i.status =
 * 'QUARANTINED'` let the planner, from statistics taken while no instance was open, read every open
 * instance of the process through their partial index for each due timer.
 */
export async function recordHeldTimeouts(
  db: Db,
  args: { now: Date; processNames: readonly string[] },
): Promise<number> {
  return db.$executeRaw`
    insert into "sagaflow"."process_transitions" (instance_id, process_name, from_state, to_state, message_id, message_type, outcome, detail, at)
    select t.instance_id, i.process_name, i.current_state, i.current_state, t.id::text, t.name, 'skipped_quarantined',
           jsonb_build_object('timer', 'held until release', 'dueAt', t.due_at), ${args.now}::timestamptz
      from "sagaflow"."process_timeouts" t
      join "sagaflow"."saga_instances" i on i.id = t.instance_id
     where t.status = 'Pending'
       and t.due_at <= ${args.now}::timestamptz
       and ${statusIn('i.status', ['QUARANTINED'])}
       and i.process_name = any(${args.processNames}::text[])
       and not exists (select 1 from "sagaflow"."process_transitions" p
                        where p.instance_id = t.instance_id and p.message_id = t.id::text
                          and p.outcome = 'skipped_quarantined')
       for key share of i skip locked`;
}
