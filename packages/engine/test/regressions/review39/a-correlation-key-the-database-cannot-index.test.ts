import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { EngineError } from '../../../src/index.ts';
import { msg, newMessageId, processManagerOn } from '../../process/support/process-harness.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/**
 * ARCHITECTURE invariant 6 / ADR 0013: bad input gets a clear refusal naming the field before any
 * write, never a driver error; text is refused past `limits.text_length` (1,000). A message id is
 * held to that, but the correlation key the process derives from the payload is only checked for NUL
 * and lone surrogates (deliverMessage): a 20,000-character order id is within the payload limit and
 * passes the message schema, then the instance insert fails inside the transaction on the unique
 * index (process_name, correlation_key), whose entries PostgreSQL caps at 2,704 bytes.
 */
describe(`a correlation key too long to store (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('is refused as invalid_input naming the key, before any write', async () => {
    const { pm } = processManagerOn(db);
    const orderId = randomBytes(10_000).toString('hex');
    const before = await db.prisma.sagaInstance.count();
    const err = await pm.deliver('order-fulfilment', msg.paymentCaptured(orderId, newMessageId('pay'))).then(
      () => null,
      (e: unknown) => e,
    );
    expect(await db.prisma.sagaInstance.count()).toBe(before);
    expect(err, String(err).slice(0, 300)).toBeInstanceOf(EngineError);
    expect((err as EngineError).code).toBe('invalid_input');
    expect((err as EngineError).message).toMatch(/key/);
  });
});
