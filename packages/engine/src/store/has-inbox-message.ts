import type { Db } from './types.ts';

/** Has this consumer already handled this message id? (Exact redelivery is then a no-op.) */
export async function hasInboxMessage(db: Db, args: { consumer: string; messageId: string }): Promise<boolean> {
  const rows = await db.$queryRaw<{ one: number }[]>`
    select 1 as one from "sagaflow"."inbox" where consumer = ${args.consumer} and message_id = ${args.messageId}`;
  return rows.length > 0;
}
