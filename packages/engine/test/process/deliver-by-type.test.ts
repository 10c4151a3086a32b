import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { orderFulfilment } from './support/order-fulfilment.ts';
import { msg, newOrderId, processManagerOn, rowsOf } from './support/process-harness.ts';

describe(`deliver(message): routed by its type (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('goes to the one process that accepts the type, exactly as deliver(process, message) would', async () => {
    const { pm } = processManagerOn(db);
    const order = newOrderId();
    expect(await pm.deliver(msg.paymentCaptured(order))).toMatchObject({
      outcome: 'applied',
      to: 'ReservingInventory',
    });
    expect((await rowsOf(db, order)).instance?.current_state).toBe('ReservingInventory');
  });

  it('a type no process accepts, or one several accept, is refused before any write, naming message.type', async () => {
    const { pm } = processManagerOn(db, {
      processes: [orderFulfilment(), orderFulfilment({ name: 'order-fulfilment-eu' })],
    });
    const before = await db.prisma.sagaInstance.count();
    await expect(pm.deliver({ id: 'x-1', type: 'Nonsense', payload: {} })).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'message.type: no registered process accepts "Nonsense"',
    });
    await expect(pm.deliver(msg.paymentCaptured(newOrderId()))).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/accepted by order-fulfilment, order-fulfilment-eu; name the process/) as unknown,
    });
    await expect(pm.deliver({ id: 'x-2', payload: {} } as never)).rejects.toMatchObject({ code: 'invalid_input' });
    expect(await db.prisma.sagaInstance.count()).toBe(before);
  });
});
