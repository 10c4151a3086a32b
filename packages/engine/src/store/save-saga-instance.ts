import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

/**
 * Saves a transition: state, its visit, data, status, the next due timer of that visit. Conditional on the
 * version read under the lock (belt and braces: a writer that skipped the lock loses here). A
 * failure record naming this message is cleared: the message it failed on has now succeeded.
 * Returns whether the row was written.
 */
export async function saveSagaInstance(
  db: Db,
  args: {
    id: string;
    expectedVersion: number;
    state: string;
    /** The visit the instance is in after this transition (a new one when the state changed). */
    stateVisit: number;
    data: unknown;
    status: 'ACTIVE' | 'COMPLETED';
    messageId: string;
    now: Date;
  },
): Promise<boolean> {
  const n = await db.$executeRaw`
    update "sagaflow"."saga_instances" i
       set current_state = ${args.state},
           state = ${JSON.stringify(args.data ?? null)}::jsonb,
           state_visit = ${args.stateVisit}::int,
           status = ${args.status},
           version = i.version + 1,
           last_message_id = ${args.messageId},
           updated_at = ${args.now}::timestamptz,
           completed_at = case when ${args.status} = 'COMPLETED' then ${args.now}::timestamptz else null end,
           next_timer_due_at = (select min(t.due_at) from "sagaflow"."process_timeouts" t
                                 where t.instance_id = i.id and ${statusIn('t.status', ['Pending'])} and t.expected_state = ${args.state}
                                   -- a timeout of a visit the instance left is stale, not next
                                   and t.armed_visit = ${args.stateVisit}::int
                                   -- the timeout being delivered (its id is the message id) is not next
                                   and t.id::text <> ${args.messageId}),
           failure_redelivery_key = case when i.failure_redelivery_key = ${args.messageId} then null else i.failure_redelivery_key end,
           failure_position = case when i.failure_redelivery_key = ${args.messageId} then null else i.failure_position end,
           failure_error_type = case when i.failure_redelivery_key = ${args.messageId} then null else i.failure_error_type end,
           failure_message = case when i.failure_redelivery_key = ${args.messageId} then null else i.failure_message end,
           failure_message_type = case when i.failure_redelivery_key = ${args.messageId} then null else i.failure_message_type end,
           failure_payload = case when i.failure_redelivery_key = ${args.messageId} then null else i.failure_payload end,
           first_failed_at = case when i.failure_redelivery_key = ${args.messageId} then null else i.first_failed_at end
     where i.id = ${args.id}::uuid and i.version = ${args.expectedVersion}::int`;
  return n === 1;
}
