import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { Database } from '../../src/db/database.ts';
import { createEngine } from '../../src/index.ts';
import { TestClock } from '../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { fragileProcess } from './support/fragile-process.ts';
import { orderFulfilment } from './support/order-fulfilment.ts';
import { msg, newMessageId, newOrderId, processManagerOn, rowsOf } from './support/process-harness.ts';

describe(`instances: find and findByStatus (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('find(id) shows status, timestamps, current state, next timer and decoded state', async () => {
    const { pm, clock } = processManagerOn(db);
    const order = newOrderId();
    const created = clock.now();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    clock.advance(5000);
    const reserved = msg.inventoryReserved(order);
    await pm.deliver('order-fulfilment', reserved);
    const id = (await rowsOf(db, order)).instance!.id;
    expect(await pm.find(id)).toEqual({
      id,
      processName: 'order-fulfilment',
      correlationKey: order,
      status: 'ACTIVE',
      currentState: 'BookingShipment',
      state: { orderId: order, paymentId: `pay-${order}`, reservationId: `res-${order}`, notes: [] },
      version: 2,
      createdAt: created,
      updatedAt: clock.now(),
      completedAt: null,
      nextTimerDueAt: new Date(clock.now().getTime() + 2 * 60 * 60 * 1000),
      lastMessageId: reserved.id,
      failure: null,
      failingTimeout: null,
    });
    expect(await pm.find('6f1d7a9e-0000-4000-8000-000000000000')).toBeNull();
    await expect(pm.find('nope')).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('history(id) is the transition history, oldest first, newest `limit` rows with a truncation flag', async () => {
    const { pm } = processManagerOn(db);
    const order = newOrderId();
    const paid = msg.paymentCaptured(order);
    await pm.deliver('order-fulfilment', paid);
    await pm.deliver('order-fulfilment', msg.inventoryReserved(order));
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order, newMessageId('pay'))); // same fact, new id: ignored
    const id = (await rowsOf(db, order)).instance!.id;
    const all = await pm.history(id);
    expect(all.truncated).toBe(false);
    expect(all.transitions.map((t) => [t.from, t.to, t.outcome])).toEqual([
      ['AwaitingPayment', 'ReservingInventory', 'applied'],
      ['ReservingInventory', 'BookingShipment', 'applied'],
      ['BookingShipment', 'BookingShipment', 'ignored'],
    ]);
    expect(all.transitions[0]?.messageId).toBe(paid.id);
    const last = await pm.history(id, { limit: 2 });
    expect(last.truncated).toBe(true);
    expect(last.transitions.map((t) => t.outcome)).toEqual(['applied', 'ignored']);
    await expect(pm.history('nope')).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('an engine built with processes exposes the same manager as engine.processes', async () => {
    const clock = new TestClock(new Date('2026-04-01T00:00:00.000Z'));
    const engine = createEngine({
      db,
      flows: [],
      actions: [],
      processes: [orderFulfilment()],
      clock,
      logger: pino({ level: 'silent' }),
      config: { processes: { quarantine_after_seconds: 60 } },
    });
    const order = newOrderId();
    const r = await engine.processes.deliver('order-fulfilment', msg.paymentCaptured(order));
    expect(r.outcome).toBe('applied');
    expect(await engine.processes.find(r.instanceId!)).toMatchObject({
      currentState: 'ReservingInventory',
      createdAt: clock.now(),
    });
    expect(() =>
      createEngine({ db, flows: [], actions: [], config: { processes: { quarantine_after_seconds: 0 } } }),
    ).toThrow(/processes\.quarantine_after_seconds/);
  });

  it('findByStatus: strictly before the instant, stalest first, at most limit, never decoding state', async () => {
    const { pm, clock } = processManagerOn(db, { processes: [orderFulfilment(), fragileProcess()] });
    const base = clock.now().getTime();
    const keys: string[] = [];
    // Four fragile instances updated at base+1s, base+2s, base+2s (the same millisecond), base+3s.
    for (const offset of [1000, 2000, 2000, 3000]) {
      clock.set(new Date(base + offset));
      const key = newOrderId();
      keys.push(key);
      await pm.deliver('fragile', { id: newMessageId('s'), type: 'Start', payload: { key } });
    }
    // One whose stored state no longer decodes: listed all the same.
    const broken = await db.prisma.sagaInstance.findFirstOrThrow({
      where: { process_name: 'fragile', correlation_key: keys[0]! },
    });
    await db.prisma
      .$executeRaw`update "sagaflow"."saga_instances" set state = '"garbage"'::jsonb where id = ${broken.id}::uuid`;

    const list = await pm.findByStatus('ACTIVE', new Date(base + 3000), 10, { processName: 'fragile' });
    expect(list).toHaveLength(3);
    expect(list[0]?.correlationKey).toBe(keys[0]);
    expect(new Set(list.slice(1).map((i) => i.correlationKey))).toEqual(new Set([keys[1], keys[2]]));
    expect(list.map((i) => i.updatedAt.getTime() - base)).toEqual([1000, 2000, 2000]);
    expect(list.every((i) => i.state === null)).toBe(true);
    const two = await pm.findByStatus('ACTIVE', new Date(base + 3000), 2, { processName: 'fragile' });
    expect(two.map((i) => i.id)).toEqual(list.slice(0, 2).map((i) => i.id));
    expect(await pm.findByStatus('ACTIVE', new Date(base + 1000), 10, { processName: 'fragile' })).toEqual([]);
    expect(await pm.findByStatus('COMPLETED', new Date(base + 10_000), 10, { processName: 'fragile' })).toEqual([]);
    expect((await pm.find(broken.id))?.state).toBeNull();
    await expect(pm.findByStatus('STUCK' as never, new Date(), 10)).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(pm.findByStatus('ACTIVE', new Date(), 0)).rejects.toThrow(/limit/);
  });
});
