import { setTimeout as sleep } from 'node:timers/promises';
import { pino, type Logger } from 'pino';
import type { Database } from '../../../../src/db/database.ts';
import { publishOutboxBatch } from '../../../../src/outbox/publish-outbox-batch.ts';
import { webhookTransport } from '../../../../src/outbox/webhook-transport.ts';

export const secret = 'review68-secret';
export const silent = pino({ level: 'silent' });

/** A webhook route posting to `url` (the sink path of one relay). */
export const routeTo = (url: string) => ({ sink: webhookTransport({ url, secret, timeoutMs: 10_000 }) });

/** The outbox row of `messageId` as the database holds it now. */
export async function rowOf(db: Database, messageId: string) {
  return db.prisma.outboxMessage.findUniqueOrThrow({ where: { message_id: messageId } });
}

/**
 * Relay B: one-shot publisher passes, one after another, until `stop()`. Each pass notes when it began, so
 * a test can wait for "a pass that began after time T has ended" (progress, not a sleep).
 */
export function rivalRelay(
  db: Database,
  url: string,
  config: Record<string, unknown>,
  logger: Logger = silent,
  publisherId = 'relay-b',
) {
  let stopping = false;
  const ended: number[] = [];
  const loop = (async () => {
    while (!stopping) {
      const began = Date.now();
      await publishOutboxBatch({ db, routes: routeTo(url), config, logger, publisherId }).catch(() => undefined);
      ended.push(began);
      await sleep(20);
    }
  })();
  return {
    /** True once a pass that began after `t` (Date.now() time) has ended. */
    passedAfter: (t: number) => ended.some((began) => began > t),
    stop: async () => {
      stopping = true;
      await loop;
    },
  };
}
