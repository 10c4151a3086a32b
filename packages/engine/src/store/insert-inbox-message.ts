import type { Db } from './types.ts';

/**
 * Records that a consumer handled a message. A duplicate key is an error on purpose: the deliver
 * path checked the inbox under the instance lock, so a conflict here means that check was bypassed.
 */
export async function insertInboxMessage(
  db: Db,
  args: { consumer: string; messageId: string; messageType: string; instanceId: string | null; now: Date },
): Promise<void> {
  await db.$executeRaw`
    insert into "sagaflow"."inbox" (consumer, message_id, message_type, instance_id, received_at)
    values (${args.consumer}, ${args.messageId}, ${args.messageType}, ${args.instanceId}::uuid, ${args.now}::timestamptz)`;
}
