import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

/**
 * Recomputes an instance's next due timer (as {@link saveSagaInstance} does) without a transition: after
 * a timeout is delivered as a no-op (its guard rejected it, or it was stale), that timeout is no longer
 * next. The caller holds the instance's row lock; `deliveredTimeoutId` is being marked Delivered in the
 * same transaction, so it is left out. The version does not move: nothing of the instance changed
 * but what its timers say (review 39).
 */
export async function refreshNextTimerDue(db: Db, args: { id: string; deliveredTimeoutId: string }): Promise<void> {
  await db.$executeRaw`
    update "sagaflow"."saga_instances" i
       set next_timer_due_at = n.due
      from (select min(t.due_at) as due
              from "sagaflow"."saga_instances" j
              join "sagaflow"."process_timeouts" t on t.instance_id = j.id
             where j.id = ${args.id}::uuid and ${statusIn('t.status', ['Pending'])}
               and t.expected_state = j.current_state
               -- a timeout of a visit the instance left is stale, not next
               and t.armed_visit = j.state_visit
               and t.id::text <> ${args.deliveredTimeoutId}) n
     where i.id = ${args.id}::uuid
       -- written only when it changes: most no-op timeouts were never next
       and i.next_timer_due_at is distinct from n.due`;
}
