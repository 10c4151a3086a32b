import type { Database } from '../db/database.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { recordConsumedMessage } from '../store/record-consumed-message.ts';

export type ConsumeOnceResult<T> = { consumed: true; result: T } | { consumed: false };

/**
 * The consumer side of the at-least-once contract: runs `fn` for a message id the first time
 * `consumer` sees it, in ONE transaction with the inbox record (`sagaflow.inbox`), so the effect and
 * the record commit together or not at all. A redelivery (a lost acknowledgement, a JetStream
 * redelivery, a webhook retry) finds the record and does nothing. If `fn` throws, nothing is kept
 * and the next delivery tries again.
 *
 * @example
 * await consumeOnce(db, 'billing', message.messageId, async (tx) => {
 *   await tx.$executeRaw`insert into charges ...`;
 * });
 */
export async function consumeOnce<T>(
  db: Pick<Database, 'prisma'>,
  consumer: string,
  messageId: string,
  fn: (tx: Prisma.TransactionClient) => Promise<T>,
  options: { messageType?: string } = {},
): Promise<ConsumeOnceResult<T>> {
  return db.prisma.$transaction(async (tx): Promise<ConsumeOnceResult<T>> => {
    const first = await recordConsumedMessage(tx, { consumer, messageId, messageType: options.messageType ?? '' });
    if (!first) return { consumed: false };
    return { consumed: true, result: await fn(tx) };
  });
}
