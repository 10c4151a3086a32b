import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { defaultStoreRetry, isTransientStoreError } from '../../src/index.ts';
import { withStoreRetry } from '../../src/process/store-retry.ts';
import { openTestDatabase } from '../support/test-database.ts';
import { twoHours } from './support/order-fulfilment.ts';
import { msg, newOrderId, processManagerOn, rowsOf } from './support/process-harness.ts';

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Real concurrent connections on PostgreSQL: the lock, not luck, keeps handlers apart. */
describe('concurrent handlers on one instance (postgres)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 12 });
  });
  afterAll(async () => {
    await db.close();
  });

  it('eight handlers delivering the same fact under different ids: exactly one advances the state', async () => {
    const { pm, waits } = processManagerOn(db, { faults: { afterLock: () => pause(30) } });
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    const results = await Promise.all(
      Array.from({ length: 8 }, () => pm.deliver('order-fulfilment', msg.inventoryReserved(order))),
    );
    expect(results.filter((r) => r.outcome === 'applied')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'ignored')).toHaveLength(7);
    const rows = await rowsOf(db, order);
    expect(rows.instance).toMatchObject({ current_state: 'BookingShipment', version: 2 });
    expect(rows.outbox.filter((o) => o.type === 'BookShipment')).toHaveLength(1);
    expect(rows.timeouts).toHaveLength(1);
    expect(rows.transitions.filter((t) => t.outcome === 'applied')).toHaveLength(2);
    expect(rows.transitions.filter((t) => t.outcome === 'ignored')).toHaveLength(7);
    expect(rows.inbox).toHaveLength(9);
    // Serialised by the row lock: no handler read a stale version and had to be retried.
    expect(waits).toEqual([]);
  });

  it('eight handlers racing to start one instance with different ids: one instance, one command', async () => {
    const { pm } = processManagerOn(db, { faults: { afterLock: () => pause(20) } });
    const order = newOrderId();
    const results = await Promise.all(
      Array.from({ length: 8 }, () => pm.deliver('order-fulfilment', msg.paymentCaptured(order))),
    );
    expect(results.map((r) => r.outcome).sort()).toEqual(['applied', ...Array<string>(7).fill('ignored')]);
    expect(new Set(results.map((r) => r.instanceId)).size).toBe(1);
    const rows = await rowsOf(db, order);
    expect(rows.outbox).toHaveLength(1);
    expect(await db.prisma.sagaInstance.count({ where: { correlation_key: order } })).toBe(1);
  });

  it('the same message delivered eight times at once is applied once; the rest are duplicates', async () => {
    const { pm } = processManagerOn(db, { faults: { afterLock: () => pause(20) } });
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    const same = msg.inventoryReserved(order);
    const results = await Promise.all(Array.from({ length: 8 }, () => pm.deliver('order-fulfilment', same)));
    expect(results.map((r) => r.outcome).sort()).toEqual(['applied', ...Array<string>(7).fill('duplicate')]);
    const rows = await rowsOf(db, order);
    expect(rows.inbox.filter((i) => i.message_id === same.id)).toHaveLength(1);
    expect(rows.outbox).toHaveLength(2);
  });

  it('a handler waits for the row lock another transaction holds, then sees the state that one left', async () => {
    const { pm, waits } = processManagerOn(db);
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    const id = (await rowsOf(db, order)).instance!.id;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = db.prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`select id from "sagaflow"."saga_instances" where id = ${id}::uuid for update`;
        locked();
        await held;
        // A rival (an operator's hand edit, another engine) moves the instance on while holding the lock.
        await tx.$executeRaw`update "sagaflow"."saga_instances" set current_state = 'Refunding', version = version + 1 where id = ${id}::uuid`;
      },
      { timeout: 20_000 },
    );
    await isLocked;
    let settled = false;
    const delivery = pm.deliver('order-fulfilment', msg.inventoryReserved(order)).finally(() => (settled = true));
    await pause(400);
    expect(settled).toBe(false);
    release();
    await holder;
    expect(await delivery).toMatchObject({ outcome: 'ignored', reason: 'not_accepted_in_state' });
    expect((await rowsOf(db, order)).outbox).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('three schedulers sweeping at once deliver each due timeout exactly once', async () => {
    const { pm, clock } = processManagerOn(db, { faults: { afterLock: () => pause(5) } });
    const orders = Array.from({ length: 12 }, () => newOrderId());
    for (const order of orders) {
      await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
      await pm.deliver('order-fulfilment', msg.inventoryReserved(order));
    }
    clock.advance(twoHours);
    const sweeps = await Promise.all([pm.sweepProcessTimeouts(), pm.sweepProcessTimeouts(), pm.sweepProcessTimeouts()]);
    // Other tests in this file left due timeouts too: every delivery counted must be one row delivered.
    const deliveredNow = await db.prisma.processTimeout.count({
      where: { status: 'Delivered', delivered_at: clock.now() },
    });
    expect(deliveredNow).toBeGreaterThanOrEqual(12);
    expect(sweeps.reduce((n, s) => n + s.delivered, 0)).toBe(deliveredNow);
    for (const order of orders) {
      const rows = await rowsOf(db, order);
      expect(rows.instance?.current_state).toBe('Refunding');
      expect(rows.timeouts.map((t) => t.status)).toEqual(['Delivered']);
      expect(rows.transitions.filter((t) => t.message_type === 'ShipmentTimeout')).toHaveLength(1);
      expect(rows.outbox.filter((o) => o.type === 'RefundPayment')).toHaveLength(1);
    }
  });

  it('a real deadlock is classified transient and retried until both transactions commit', async () => {
    const { pm } = processManagerOn(db);
    const [a, b] = [newOrderId(), newOrderId()];
    await pm.deliver('order-fulfilment', msg.paymentCaptured(a));
    await pm.deliver('order-fulfilment', msg.paymentCaptured(b));
    const ida = (await rowsOf(db, a)).instance!.id;
    const idb = (await rowsOf(db, b)).instance!.id;
    const seen: unknown[] = [];
    let arrived = 0;
    let bothArrived!: () => void;
    const barrier = new Promise<void>((r) => (bothArrived = r));
    const crossed = (first: string, second: string) =>
      withStoreRetry(
        { ...defaultStoreRetry, baseDelayMs: 10 },
        (attempt) =>
          db.prisma.$transaction(
            async (tx) => {
              await tx.$executeRaw`update "sagaflow"."saga_instances" set version = version + 1 where id = ${first}::uuid`;
              if (attempt === 1) {
                if (++arrived === 2) bothArrived();
                await barrier;
              }
              await tx.$executeRaw`update "sagaflow"."saga_instances" set version = version + 1 where id = ${second}::uuid`;
              return attempt;
            },
            { timeout: 20_000 },
          ),
        async (ms) => {
          await pause(ms);
        },
      ).catch((err: unknown) => {
        seen.push(err);
        throw err;
      });
    const probe = (first: string, second: string) =>
      crossed(first, second).then(
        (n) => n,
        (err: unknown) => err,
      );
    const [ra, rb] = await Promise.all([probe(ida, idb), probe(idb, ida)]);
    expect(seen).toEqual([]);
    // One went through at its first attempt; the deadlock's victim retried (more than once on a loaded
    // machine, where its retry can meet the winner's locks again) and committed.
    expect(Math.min(Number(ra), Number(rb))).toBe(1);
    expect(Math.max(Number(ra), Number(rb))).toBeGreaterThanOrEqual(2);
    expect((await rowsOf(db, a)).instance?.version).toBe(3);
    expect((await rowsOf(db, b)).instance?.version).toBe(3);
  });

  it('the error PostgreSQL raises for a deadlock, as Prisma hands it over, is recognised as transient', async () => {
    const { pm } = processManagerOn(db);
    const [a, b] = [newOrderId(), newOrderId()];
    await pm.deliver('order-fulfilment', msg.paymentCaptured(a));
    await pm.deliver('order-fulfilment', msg.paymentCaptured(b));
    const ida = (await rowsOf(db, a)).instance!.id;
    const idb = (await rowsOf(db, b)).instance!.id;
    let arrived = 0;
    let bothArrived!: () => void;
    const barrier = new Promise<void>((r) => (bothArrived = r));
    const crossed = (first: string, second: string) =>
      db.prisma
        .$transaction(
          async (tx) => {
            await tx.$executeRaw`update "sagaflow"."saga_instances" set version = version + 1 where id = ${first}::uuid`;
            if (++arrived === 2) bothArrived();
            await barrier;
            await tx.$executeRaw`update "sagaflow"."saga_instances" set version = version + 1 where id = ${second}::uuid`;
          },
          { timeout: 20_000 },
        )
        .then(
          () => null,
          (err: unknown) => err,
        );
    const errors = (await Promise.all([crossed(ida, idb), crossed(idb, ida)])).filter((e) => e !== null);
    expect(errors).toHaveLength(1);
    expect(String((errors[0] as Error).message)).toMatch(/deadlock|40P01/);
    expect(isTransientStoreError(errors[0])).toBe(true);
  });
});
