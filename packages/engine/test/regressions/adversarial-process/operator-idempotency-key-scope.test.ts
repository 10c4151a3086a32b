import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { msg, newOrderId, processManagerOn, rowsOf } from '../../process/support/process-harness.ts';

/**
 * Seed 004's repair: "submit it with the expected process state, operator identity, reason, and a new
 * idempotency key". runOperatorCommand turns the key into the inbox message id `operator:<key>`,
 * checked against the process's whole inbox (consumer = process name), not the instance and not the
 * command: any earlier inbox row with that id, from another instance, another command, or an incoming
 * message whose id happens to read `operator:<key>`, makes the command a "duplicate" that was never
 * applied to this instance.
 */
describe(`operator command idempotency key (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  async function inManualReview(pm: ReturnType<typeof processManagerOn>['pm']) {
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    await pm.deliver('order-fulfilment', msg.inventoryRejected(order));
    await pm.deliver('order-fulfilment', msg.refundFailed(order));
    const rows = await rowsOf(db, order);
    expect(rows.instance?.current_state).toBe('ManualReview');
    return { order, id: rows.instance!.id };
  }

  const retryRefund = (idempotencyKey: string) => ({
    command: 'RetryRefund',
    input: {},
    expectedState: 'ManualReview',
    operator: 'ops@example.com',
    reason: 'card updated',
    idempotencyKey,
  });

  it('the same key on another instance is not answered "duplicate" for a command that instance never ran', async () => {
    const { pm } = processManagerOn(db);
    const x = await inManualReview(pm);
    const y = await inManualReview(pm);
    expect(await pm.runOperatorCommand('order-fulfilment', x.id, retryRefund('ticket-4711'))).toMatchObject({
      outcome: 'applied',
    });
    const onY = await pm
      .runOperatorCommand('order-fulfilment', y.id, retryRefund('ticket-4711'))
      .catch((e: unknown) => e);
    const yRows = await rowsOf(db, y.order);
    // Either applied to Y, or refused as a reused key: never reported as Y's own replay.
    expect(onY).not.toEqual({ outcome: 'duplicate' });
    expect(yRows.transitions.some((t) => t.outcome === 'repair') || onY instanceof Error).toBe(true);
  });

  it('an incoming message whose id reads "operator:<key>" does not swallow a later operator command', async () => {
    const { pm } = processManagerOn(db);
    const x = await inManualReview(pm);
    // An external feed's message id that happens to start with "operator:": the prefix is reserved for
    // operator commands, so it is refused as bad input (naming the field) before any write.
    await expect(
      pm.deliver('order-fulfilment', msg.note(x.order, 'customer called', 'operator:42')),
    ).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('message.id must not start with "operator:"') as unknown,
    });
    const r = await pm.runOperatorCommand('order-fulfilment', x.id, retryRefund('42'));
    const rows = await rowsOf(db, x.order);
    expect(r).toMatchObject({ outcome: 'applied', to: 'Refunding' });
    expect(rows.instance?.current_state).toBe('Refunding');
  });
});
