import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { createProcessManager } from '../../src/index.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { fragileProcess } from './support/fragile-process.ts';
import { orderFulfilment, twoHours } from './support/order-fulfilment.ts';
import { msg, newMessageId, newOrderId, processManagerOn, rowsOf } from './support/process-harness.ts';

const minute = 60_000;
const budgetSeconds = 300;

/** Seed 002's quarantine rules, one test each, on a controllable clock. */
describe(`quarantine (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  /** The fulfilment process with a switch to "fix the bug" behind poison notes, and the fragile one. */
  function setup(opts: { quarantine?: boolean } = {}) {
    const poison = { on: true };
    const h = processManagerOn(db, {
      processes: [orderFulfilment({ isPoison: (n) => poison.on && n.startsWith('poison') }), fragileProcess()],
      config: opts.quarantine === false ? {} : { quarantine_after_seconds: budgetSeconds },
    });
    return { ...h, poison };
  }

  async function orderAt(pm: ReturnType<typeof setup>['pm'], state: 'ReservingInventory' | 'BookingShipment') {
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    if (state === 'BookingShipment') await pm.deliver('order-fulfilment', msg.inventoryReserved(order));
    const id = (await rowsOf(db, order)).instance!.id;
    return { order, id };
  }

  it('is off by default: a message failing for hours is rethrown every time and records nothing', async () => {
    const { pm, clock } = setup({ quarantine: false });
    const { order, id } = await orderAt(pm, 'ReservingInventory');
    const poison = msg.note(order, 'poison pill');
    for (let i = 0; i < 3; i++) {
      await expect(pm.deliver('order-fulfilment', poison)).rejects.toThrow('cannot handle note');
      clock.advance(2 * twoHours);
    }
    expect(await pm.find(id)).toMatchObject({ status: 'ACTIVE', failure: null, version: 1 });
  });

  it('refuses a zero, negative or null budget, naming the field', () => {
    for (const bad of [0, -5, null]) {
      expect(() =>
        createProcessManager({ db, processes: [], config: { quarantine_after_seconds: bad as never } }),
      ).toThrow(/processes\.quarantine_after_seconds/);
    }
  });

  it('first failure writes the record (key, position, error type, firstFailedAt) and rethrows', async () => {
    const { pm, clock } = setup();
    const { order, id } = await orderAt(pm, 'ReservingInventory');
    const poison = { ...msg.note(order, 'poison pill'), position: 4242 };
    await expect(pm.deliver('order-fulfilment', poison)).rejects.toThrow('cannot handle note "poison pill"');
    const found = await pm.find(id);
    expect(found).toMatchObject({ status: 'ACTIVE', currentState: 'ReservingInventory' });
    expect(found?.failure).toEqual({
      redeliveryKey: poison.id,
      position: '4242',
      errorType: 'PoisonNoteError',
      message: 'cannot handle note "poison pill"',
      messageType: 'CustomerNoteAdded',
      firstFailedAt: clock.now(),
    });
    const raw = (await rowsOf(db, order)).instance;
    expect(raw?.failure_payload).toEqual(poison.payload);
    expect((await rowsOf(db, order)).inbox.map((i) => i.message_id)).not.toContain(poison.id);
  });

  it('cuts the recorded error message at 1,000 characters', async () => {
    const { pm } = setup();
    const { order, id } = await orderAt(pm, 'ReservingInventory');
    await expect(pm.deliver('order-fulfilment', msg.note(order, `poison ${'x'.repeat(3000)}`))).rejects.toThrow();
    const failure = (await pm.find(id))?.failure;
    expect(failure?.message).toHaveLength(1000);
    expect(failure?.message.startsWith('cannot handle note "poison x')).toBe(true);
  });

  it('the same message failing again inside the budget writes nothing', async () => {
    const { pm, clock } = setup();
    const { order } = await orderAt(pm, 'ReservingInventory');
    const poison = msg.note(order, 'poison pill');
    await expect(pm.deliver('order-fulfilment', poison)).rejects.toThrow();
    const before = (await rowsOf(db, order)).instance;
    clock.advance(2 * minute);
    await expect(pm.deliver('order-fulfilment', poison)).rejects.toThrow();
    expect((await rowsOf(db, order)).instance).toEqual(before);
  });

  it('a different message failing rewrites the record and keeps firstFailedAt', async () => {
    const { pm, clock } = setup();
    const { order, id } = await orderAt(pm, 'ReservingInventory');
    const first = msg.note(order, 'poison one');
    await expect(pm.deliver('order-fulfilment', first)).rejects.toThrow();
    const firstFailedAt = clock.now();
    clock.advance(minute);
    const second = msg.note(order, 'poison two');
    await expect(pm.deliver('order-fulfilment', second)).rejects.toThrow('poison two');
    expect((await pm.find(id))?.failure).toMatchObject({
      redeliveryKey: second.id,
      message: 'cannot handle note "poison two"',
      firstFailedAt,
    });
  });

  it('past the budget the next failure quarantines the instance and returns normally', async () => {
    const { pm, clock } = setup();
    const { order, id } = await orderAt(pm, 'ReservingInventory');
    const poison = msg.note(order, 'poison pill');
    await expect(pm.deliver('order-fulfilment', poison)).rejects.toThrow();
    clock.advance(budgetSeconds * 1000 - 1);
    await expect(pm.deliver('order-fulfilment', poison)).rejects.toThrow();
    expect((await pm.find(id))?.status).toBe('ACTIVE');
    clock.advance(1);
    expect(await pm.deliver('order-fulfilment', poison)).toEqual({ outcome: 'quarantined', instanceId: id });
    const rows = await rowsOf(db, order);
    expect(rows.instance).toMatchObject({ status: 'QUARANTINED', current_state: 'ReservingInventory' });
    expect(rows.instance?.updated_at).toEqual(clock.now());
    expect(rows.transitions.at(-1)).toMatchObject({ outcome: 'quarantined', message_id: poison.id });
  });

  it('a different message past the budget is quarantined on its own first failure', async () => {
    const { pm, clock } = setup();
    const { order, id } = await orderAt(pm, 'ReservingInventory');
    await expect(pm.deliver('order-fulfilment', msg.note(order, 'poison one'))).rejects.toThrow();
    clock.advance(budgetSeconds * 1000 + minute);
    const second = msg.note(order, 'poison two');
    expect((await pm.deliver('order-fulfilment', second)).outcome).toBe('quarantined');
    expect((await pm.find(id))?.failure).toMatchObject({
      redeliveryKey: second.id,
      message: expect.stringContaining('two') as unknown,
    });
  });

  it('a quarantined instance skips its own messages and timers; other instances proceed; nothing is deleted', async () => {
    const { pm, clock } = setup();
    const stuck = await orderAt(pm, 'BookingShipment');
    const healthy = await orderAt(pm, 'BookingShipment');
    const poison = msg.note(stuck.order, 'poison pill');
    await expect(pm.deliver('order-fulfilment', poison)).rejects.toThrow();
    clock.advance(budgetSeconds * 1000);
    expect((await pm.deliver('order-fulfilment', poison)).outcome).toBe('quarantined');
    const quarantined = await rowsOf(db, stuck.order);

    const late = msg.shipmentBooked(stuck.order);
    expect((await pm.deliver('order-fulfilment', late)).outcome).toBe('skipped_quarantined');
    clock.advance(twoHours);
    await pm.sweepProcessTimeouts();

    const s = await rowsOf(db, stuck.order);
    expect(s.instance).toEqual(quarantined.instance);
    expect(s.timeouts).toEqual(quarantined.timeouts);
    expect(s.timeouts[0]?.status).toBe('Pending');
    expect(s.outbox).toEqual(quarantined.outbox);
    expect(s.inbox).toEqual(quarantined.inbox);
    expect(s.transitions.slice(quarantined.transitions.length)).toMatchObject([
      { outcome: 'skipped_quarantined', message_id: late.id },
      { outcome: 'skipped_quarantined', message_id: s.timeouts[0]?.id, message_type: 'ShipmentTimeout' },
    ]);
    await pm.sweepProcessTimeouts();
    expect((await rowsOf(db, stuck.order)).transitions).toHaveLength(s.transitions.length);
    expect(s.instance?.state).toMatchObject({ orderId: stuck.order, reservationId: `res-${stuck.order}` });

    const h = await rowsOf(db, healthy.order);
    expect(h.instance).toMatchObject({ current_state: 'Refunding', status: 'ACTIVE' });
    expect(h.timeouts[0]?.status).toBe('Delivered');
  });

  it('the record is cleared when the message it names succeeds, and not by another message succeeding', async () => {
    const { pm, poison } = setup();
    const { order, id } = await orderAt(pm, 'ReservingInventory');
    const note = msg.note(order, 'poison pill');
    await expect(pm.deliver('order-fulfilment', note)).rejects.toThrow();
    expect((await pm.deliver('order-fulfilment', msg.note(order, 'gift wrap please'))).outcome).toBe('applied');
    expect((await pm.find(id))?.failure?.redeliveryKey).toBe(note.id);
    poison.on = false;
    expect((await pm.deliver('order-fulfilment', note)).outcome).toBe('applied');
    const found = await pm.find(id);
    expect(found?.failure).toBeNull();
    expect(found?.state).toMatchObject({ notes: ['gift wrap please', 'poison pill'] });
    expect((await rowsOf(db, order)).instance).toMatchObject({ first_failed_at: null, failure_payload: null });
  });

  it('a message that fails before its instance exists creates the instance to hold the record', async () => {
    const { pm, clock } = setup();
    const key = newOrderId();
    const start = { id: newMessageId('start'), type: 'Start', payload: { key, explode: true } };
    await expect(pm.deliver('fragile', start)).rejects.toThrow('start exploded');
    const held = await pm.findByStatus('ACTIVE', new Date(clock.now().getTime() + 1), 1000, { processName: 'fragile' });
    const instance = held.find((i) => i.correlationKey === key);
    expect(instance).toMatchObject({ currentState: 'Open', failure: { redeliveryKey: start.id, errorType: 'Error' } });
  });

  it('failures that record nothing: a failing timeout, an unroutable message', async () => {
    const { pm, clock } = setup();
    const key = newOrderId();
    await pm.deliver('fragile', { id: newMessageId('start'), type: 'Start', payload: { key } });
    const row = await db.prisma.sagaInstance.findFirstOrThrow({
      where: { process_name: 'fragile', correlation_key: key },
    });
    for (let i = 0; i < 3; i++) {
      clock.advance(budgetSeconds * 1000);
      await pm.sweepProcessTimeouts();
    }
    const after = await db.prisma.sagaInstance.findUniqueOrThrow({ where: { id: row.id } });
    expect(after).toMatchObject({
      status: 'ACTIVE',
      current_state: 'Open',
      failure_redelivery_key: null,
      version: row.version,
    });
    const timeout = await db.prisma.processTimeout.findFirstOrThrow({ where: { instance_id: row.id } });
    expect(timeout).toMatchObject({ status: 'Pending', last_error: 'tick handler is broken' });
    expect(timeout.attempts).toBeGreaterThanOrEqual(2);

    const instancesBefore = await db.prisma.sagaInstance.count();
    await expect(
      pm.deliver('fragile', { id: newMessageId('lost'), type: 'Finish', payload: { key: 'unroutable' } }),
    ).rejects.toThrow('no instance for this key');
    expect(await db.prisma.sagaInstance.count()).toBe(instancesBefore);
  });

  it('an instance whose state no longer decodes is still recorded, quarantined, found and listed; its state is kept', async () => {
    const { pm, clock } = setup();
    const { order, id } = await orderAt(pm, 'ReservingInventory');
    await db.prisma
      .$executeRaw`update "sagaflow"."saga_instances" set state = '{"orderId": 7}'::jsonb where id = ${id}::uuid`;
    const m = msg.inventoryReserved(order);
    await expect(pm.deliver('order-fulfilment', m)).rejects.toMatchObject({ code: 'state_undecodable' });
    expect((await pm.find(id))?.failure).toMatchObject({
      redeliveryKey: m.id,
      errorType: 'EngineError:state_undecodable',
    });
    clock.advance(budgetSeconds * 1000);
    expect((await pm.deliver('order-fulfilment', m)).outcome).toBe('quarantined');
    const found = await pm.find(id);
    expect(found).toMatchObject({ status: 'QUARANTINED', state: null, currentState: 'ReservingInventory' });
    const listed = await pm.findByStatus('QUARANTINED', new Date(clock.now().getTime() + 1), 1000);
    expect(listed.find((i) => i.id === id)).toMatchObject({ state: null, failure: { redeliveryKey: m.id } });
    expect((await rowsOf(db, order)).instance?.state).toEqual({ orderId: 7 });
  });

  describe('release (beyond seed 002)', () => {
    async function quarantinedOrder(h: ReturnType<typeof setup>) {
      const { order, id } = await orderAt(h.pm, 'BookingShipment');
      const poison = msg.note(order, 'poison pill');
      await expect(h.pm.deliver('order-fulfilment', poison)).rejects.toThrow();
      h.clock.advance(budgetSeconds * 1000);
      expect((await h.pm.deliver('order-fulfilment', poison)).outcome).toBe('quarantined');
      return { order, id, poison };
    }
    const who = { operator: 'ops@example.com', reason: 'converter fixed in v2.3' };

    it('retry re-delivers the message it stopped on; skipped messages and armed timers then resume', async () => {
      const h = setup();
      const { order, id, poison } = await quarantinedOrder(h);
      const skipped = msg.shipmentBooked(order);
      expect((await h.pm.deliver('order-fulfilment', skipped)).outcome).toBe('skipped_quarantined');

      h.poison.on = false;
      expect(await h.pm.release(id, { mode: 'retry', ...who })).toEqual({
        mode: 'retry',
        messageId: poison.id,
        outcome: 'applied',
        from: 'BookingShipment',
        to: 'BookingShipment',
        resumed: [{ messageId: skipped.id, outcome: 'applied' }],
        stoppedOn: null,
      });
      const rows = await rowsOf(db, order);
      // The message skipped while quarantined was kept and applied by the release, after the poison one.
      expect(rows.instance).toMatchObject({ status: 'COMPLETED', failure_redelivery_key: null, first_failed_at: null });
      expect(rows.instance?.state).toMatchObject({ notes: ['poison pill'] });
      expect(rows.inbox.map((i) => i.message_id)).toEqual(expect.arrayContaining([poison.id, skipped.id]));
      expect(rows.transitions.slice(-3)).toMatchObject([
        { outcome: 'applied', message_id: poison.id },
        { outcome: 'repair', message_id: poison.id, detail: { release: 'retry', ...who } },
        { outcome: 'applied', message_id: skipped.id, from_state: 'BookingShipment', to_state: 'Completed' },
      ]);
      // Its redelivery by the feed is now an exact duplicate.
      expect((await h.pm.deliver('order-fulfilment', skipped)).outcome).toBe('duplicate');
    });

    it('an armed timer of a released instance fires on the next sweep', async () => {
      const h = setup();
      const { order, id } = await quarantinedOrder(h);
      h.clock.advance(twoHours);
      await h.pm.sweepProcessTimeouts();
      expect((await rowsOf(db, order)).timeouts[0]?.status).toBe('Pending');
      await h.pm.release(id, { mode: 'skip', ...who });
      await h.pm.sweepProcessTimeouts();
      const rows = await rowsOf(db, order);
      expect(rows.timeouts[0]?.status).toBe('Delivered');
      expect(rows.instance?.current_state).toBe('Refunding');
    });

    it('a retry that fails again changes nothing: still QUARANTINED, and release_failed says why', async () => {
      const h = setup();
      const { order, id } = await quarantinedOrder(h);
      const before = await rowsOf(db, order);
      await expect(h.pm.release(id, { mode: 'retry', ...who })).rejects.toMatchObject({
        code: 'release_failed',
        message: expect.stringContaining('cannot handle note') as unknown,
      });
      expect(await rowsOf(db, order)).toEqual(before);
    });

    it('skip marks the message handled without applying it and returns the instance to ACTIVE', async () => {
      const h = setup();
      const { order, id, poison } = await quarantinedOrder(h);
      const stateBefore = (await rowsOf(db, order)).instance?.state;
      expect(await h.pm.release(id, { mode: 'skip', ...who })).toMatchObject({ mode: 'skip', outcome: 'skipped' });
      const rows = await rowsOf(db, order);
      expect(rows.instance).toMatchObject({
        status: 'ACTIVE',
        current_state: 'BookingShipment',
        failure_redelivery_key: null,
      });
      expect(rows.instance?.state).toEqual(stateBefore);
      expect(rows.transitions.at(-1)).toMatchObject({
        outcome: 'repair',
        detail: { release: 'skip', skipped: poison.id },
      });
      expect((await h.pm.deliver('order-fulfilment', poison)).outcome).toBe('duplicate');
    });

    it('a kept message that fails as the release applies it quarantines the instance again, on it', async () => {
      const h = setup();
      const { order, id, poison } = await quarantinedOrder(h);
      const note = msg.note(order, 'fine note');
      const second = msg.note(order, 'poison again');
      const after = msg.note(order, 'after the poison');
      for (const m of [note, second, after])
        expect((await h.pm.deliver('order-fulfilment', m)).outcome).toBe('skipped_quarantined');
      const r = await h.pm.release(id, { mode: 'skip', ...who });
      expect(r).toMatchObject({
        outcome: 'skipped',
        messageId: poison.id,
        resumed: [{ messageId: note.id, outcome: 'applied' }],
        stoppedOn: { messageId: second.id, errorType: 'PoisonNoteError' },
      });
      const rows = await rowsOf(db, order);
      // What came before the second poison note stays done; the instance stops on that note.
      expect(rows.instance).toMatchObject({ status: 'QUARANTINED', failure_redelivery_key: second.id });
      expect(rows.instance?.state).toMatchObject({ notes: ['fine note'] });
      // Released again, skipping it: the note kept after it is applied, nothing is lost.
      expect(await h.pm.release(id, { mode: 'skip', ...who })).toMatchObject({
        messageId: second.id,
        resumed: [{ messageId: after.id, outcome: 'applied' }],
        stoppedOn: null,
      });
      expect((await rowsOf(db, order)).instance?.state).toMatchObject({ notes: ['fine note', 'after the poison'] });
    });

    it('refuses to release an instance that is not quarantined, and bad arguments, writing nothing', async () => {
      const h = setup();
      const { order, id } = await orderAt(h.pm, 'ReservingInventory');
      const before = await rowsOf(db, order);
      await expect(h.pm.release(id, { mode: 'retry', ...who })).rejects.toMatchObject({
        code: 'instance_not_quarantined',
      });
      await expect(h.pm.release(id, { mode: 'again' as never, ...who })).rejects.toThrow(/mode/);
      await expect(h.pm.release(id, { mode: 'skip', operator: '', reason: 'x' })).rejects.toThrow(/operator/);
      await expect(h.pm.release('not-a-uuid', { mode: 'skip', ...who })).rejects.toThrow(/instanceId/);
      expect(await rowsOf(db, order)).toEqual(before);
    });
  });
});
