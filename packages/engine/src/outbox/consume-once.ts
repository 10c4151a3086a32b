import type { Database } from '../db/database.ts';
import { EngineError } from '../errors/engine-error.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { recordConsumedMessage } from '../store/record-consumed-message.ts';

export type ConsumeOnceResult<T> = { consumed: true; result: T } | { consumed: false };

/**
 * The consumer side of the at-least-once contract: runs `fn` for a message id the first time
 * `consumer` sees it, in ONE transaction with the inbox record (`sagaflow.inbox`), so the effect and
 * the record commit together or not at all. A redelivery (a lost acknowledgement, a JetStream
 * redelivery, a webhook retry) finds the record and does nothing. If `fn` throws, or runs past
 * `timeoutMs`, nothing is kept and the next delivery tries again.
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
  options: {
    messageType?: string;
    /**
     * How long the transaction, `fn` included, may run before it is rolled back (and the message is
     * left for its redelivery). Default 30 s, the outbox publisher's own publish_timeout_ms.
     */
    timeoutMs?: number;
  } = {},
): Promise<ConsumeOnceResult<T>> {
  const timeout = options.timeoutMs ?? 30_000;
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > 600_000)
    throw new EngineError('invalid_input', 'timeoutMs: must be a whole number of milliseconds from 1 to 600000', {
      field: 'timeoutMs',
    });
  return db.prisma.$transaction(
    async (tx): Promise<ConsumeOnceResult<T>> => {
      const first = await recordConsumedMessage(tx, { consumer, messageId, messageType: options.messageType ?? '' });
      if (!first) return { consumed: false };
      return { consumed: true, result: await fn(tx) };
    },
    { timeout },
  );
}
