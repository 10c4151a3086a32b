import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { fragileProcess } from './support/fragile-process.ts';
import { orderFulfilment, twoHours } from './support/order-fulfilment.ts';
import { msg, processManagerOn, newOrderId, rowsOf } from './support/process-harness.ts';

const budgetSeconds = 300;

/**
 * ADR 0040: the overview's chart counts transitions by the process each one carries, not by a
 * lookup of its instance. Every way the engine writes a transition (applied, ignored, quarantined,
 * a message or a timer skipped while quarantined, an operator's release) writes its process.
 */
describe(`a transition carries its instance's process (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('every history row the engine writes names the process of its instance', async () => {
    const poison = { on: true };
    const { pm, clock } = processManagerOn(db, {
      processes: [orderFulfilment({ isPoison: (n) => poison.on && n.startsWith('poison') }), fragileProcess()],
      config: { quarantine_after_seconds: budgetSeconds },
    });
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    expect((await pm.deliver('order-fulfilment', msg.paymentCaptured(order))).outcome).toBe('ignored');
    await pm.deliver('order-fulfilment', msg.inventoryReserved(order));
    const pill = msg.note(order, 'poison pill');
    await expect(pm.deliver('order-fulfilment', pill)).rejects.toThrow();
    clock.advance(budgetSeconds * 1000);
    expect((await pm.deliver('order-fulfilment', pill)).outcome).toBe('quarantined');
    expect((await pm.deliver('order-fulfilment', msg.shipmentBooked(order))).outcome).toBe('skipped_quarantined');
    clock.advance(twoHours);
    await pm.sweepProcessTimeouts();
    poison.on = false;
    const { id } = (await rowsOf(db, order)).instance!;
    await pm.release(id, { mode: 'retry', operator: 'ops@example.com', reason: 'fixed' });
    // Another process's instance in the same table: each row names its own.
    await pm.deliver('fragile', { id: `start-${order}`, type: 'Start', payload: { key: order } });

    const rows = await db.prisma.processTransition.findMany({ orderBy: { id: 'asc' } });
    const instances = await db.prisma.sagaInstance.findMany({ select: { id: true, process_name: true } });
    const processOf = new Map(instances.map((i) => [i.id, i.process_name]));
    const ours = rows.filter((r) => r.instance_id === id);
    expect(new Set(ours.map((r) => r.outcome))).toEqual(
      new Set(['applied', 'ignored', 'quarantined', 'skipped_quarantined', 'repair']),
    );
    // One skipped message, one held timer (record-held-timeouts.ts).
    expect(ours.filter((r) => r.outcome === 'skipped_quarantined')).toHaveLength(2);
    expect(new Set(rows.map((r) => r.process_name))).toEqual(new Set(['order-fulfilment', 'fragile']));
    for (const r of rows) expect(r.process_name, `${r.outcome} ${r.message_id}`).toBe(processOf.get(r.instance_id));
  });
});
