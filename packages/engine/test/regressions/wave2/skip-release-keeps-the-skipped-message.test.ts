import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { orderFulfilment } from '../../process/support/order-fulfilment.ts';
import { msg, newOrderId, processManagerOn, rowsOf } from '../../process/support/process-harness.ts';

/**
 * Issue 13, item 5: `release(id, { mode: 'skip' })` wrote the stopped-on message's id into the inbox
 * and its audit row, and nulled `failure_payload`: the payload was nowhere in the database any more.
 * Skipped means kept and visible, never deleted.
 */
describe(`a skip release keeps the skipped message (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('the skipped message (id, type, payload, position, failure) stays in the database and in the instance history', async () => {
    const { pm, clock } = processManagerOn(db, {
      processes: [orderFulfilment()],
      config: { quarantine_after_seconds: 1 },
    });
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    const poison = { ...msg.note(order, 'poison: a note nobody can file'), position: 4242 };
    await expect(pm.deliver('order-fulfilment', poison)).rejects.toThrow('cannot handle note');
    const firstFailedAt = clock.now();
    clock.advance(1_000);
    expect((await pm.deliver('order-fulfilment', poison)).outcome).toBe('quarantined');
    const id = (await rowsOf(db, order)).instance!.id;

    const released = await pm.release(id, { mode: 'skip', operator: 'ops@example.com', reason: 'unfileable note' });
    expect(released).toMatchObject({ mode: 'skip', outcome: 'skipped', messageId: poison.id });

    // Through the engine: the repair row of the release names the message and keeps all of it.
    const repair = (await pm.history(id)).transitions.find((t) => t.outcome === 'repair');
    expect(repair).toMatchObject({
      messageId: poison.id,
      messageType: 'CustomerNoteAdded',
      detail: {
        release: 'skip',
        operator: 'ops@example.com',
        reason: 'unfileable note',
        skippedMessage: {
          id: poison.id,
          type: 'CustomerNoteAdded',
          payload: poison.payload,
          position: '4242',
          errorType: 'PoisonNoteError',
          message: 'cannot handle note "poison: a note nobody can file"',
          firstFailedAt: firstFailedAt.toISOString(),
        },
      },
    });

    // In the database, whatever reads it: the payload is stored, not only its id.
    const holding = await db.prisma.$queryRaw<{ n: bigint }[]>`
      select count(*) as n from "sagaflow"."process_transitions"
       where instance_id = ${id}::uuid and outcome = 'repair'
         and detail -> 'skippedMessage' -> 'payload' = ${JSON.stringify(poison.payload)}::jsonb`;
    expect(Number(holding[0]?.n)).toBe(1);
    // Handled, so its redelivery is a no-op; the instance is ACTIVE again with no failure on record.
    expect((await pm.deliver('order-fulfilment', poison)).outcome).toBe('duplicate');
    expect(await pm.find(id)).toMatchObject({ status: 'ACTIVE', failure: null });
  });
});
