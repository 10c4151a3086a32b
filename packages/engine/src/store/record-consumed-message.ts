import type { Db } from './types.ts';

/**
 * The consumer-side inbox record: true the first time `consumer` sees `messageId`, false for every
 * redelivery. Run inside the transaction that applies the message's effect, so both commit or neither.
 */
export async function recordConsumedMessage(
  db: Db,
  args: { consumer: string; messageId: string; messageType: string },
): Promise<boolean> {
  const inserted = await db.$executeRaw`
    insert into "sagaflow"."inbox" (consumer, message_id, message_type)
    values (${args.consumer}, ${args.messageId}, ${args.messageType})
    on conflict (consumer, message_id) do nothing`;
  return inserted === 1;
}
