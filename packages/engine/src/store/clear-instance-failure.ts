import type { Db } from './types.ts';

/**
 * Clears the failure record when it names `messageId` (that message has now been handled, if only
 * as a no-op). A record naming another message stays. Returns whether it was cleared.
 */
export async function clearInstanceFailure(
  db: Db,
  args: { id: string; messageId: string; now: Date },
): Promise<boolean> {
  const n = await db.$executeRaw`
    update "sagaflow"."saga_instances"
       set failure_redelivery_key = null, failure_position = null, failure_error_type = null,
           failure_message = null, failure_message_type = null, failure_payload = null,
           first_failed_at = null,
           version = version + 1, updated_at = ${args.now}::timestamptz
     where id = ${args.id}::uuid and failure_redelivery_key = ${args.messageId}`;
  return n === 1;
}
