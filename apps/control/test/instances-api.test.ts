import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import './provided-context.ts';
import { testDatabaseUrl, type apiClient, rejection, signedInClient } from './support/test-plane.ts';
import { fulfilmentProcess } from '../src/demo/fulfilment-process.ts';
import { booked, orderWhere, reserved } from './support/demo-orders.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

const shipsFine = (id: string) => reserved(id) && booked(id);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('instances API over HTTP (PostgreSQL)', () => {
  let plane: ControlPlane;
  let api: ReturnType<typeof apiClient>;
  beforeAll(async () => {
    const url = await testDatabaseUrl('instances_api');
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: url,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_ENGINE_CONFIG: JSON.stringify({ processes: { quarantine_after_seconds: 1 } }),
      }),
    );
    api = await signedInClient(plane, 'operator');
  });
  afterAll(async () => {
    await plane.stop();
  });

  const deliver = (message: { id: string; type: string; payload: Record<string, unknown> }) =>
    plane.engine.processes.deliver(fulfilmentProcess, message);
  const instanceIdOf = (r: { instanceId: string | null }): string => {
    if (r.instanceId === null) throw new Error('the delivery reached no instance');
    return r.instanceId;
  };
  /** A note on an unpaid order: creates its instance, which waits in AwaitingPayment and emits nothing. */
  const noteOn = async (orderId: string, note = 'leave it at the door') => {
    const r = await deliver({ id: `note-${randomUUID()}`, type: 'CustomerNoteAdded', payload: { orderId, note } });
    return instanceIdOf(r);
  };
  const ids = (list: { id: string }[]) => list.map((i) => i.id);
  /**
   * The engine stamps updated_at from its clock (`new Date()`) and the list's stale filter cuts at
   * `Date.now()` less the window: both read the global Date. With real time, `fresh` had to be less
   * than 1 s old when the stale query ran, so two HTTP queries slower than 1 s (a loaded machine) got
   * it listed as stale. Here Date stands still (timers stay real) and the test moves it: the three
   * instances are 0, 20 and 1 220 ms apart and the queries run at the instant `fresh` was written,
   * however long the writes and the queries take.
   */
  it('lists active instances stalest first, and the stale filter keeps only those quiet for long enough', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const pass = (ms: number) => vi.setSystemTime(Date.now() + ms);
    const older = await noteOn(randomUUID());
    pass(20);
    const newer = await noteOn(randomUUID());
    pass(1_200);
    const fresh = await noteOn(randomUUID());

    const all = ids(await api.instances.list.query({ status: 'ACTIVE', processName: 'demo.fulfilment' }));
    expect(all).toEqual(expect.arrayContaining([older, newer, fresh]));
    expect(all.indexOf(older)).toBeLessThan(all.indexOf(newer));
    expect(all.indexOf(newer)).toBeLessThan(all.indexOf(fresh));

    const stale = ids(await api.instances.list.query({ status: 'ACTIVE', staleForSeconds: 1 }));
    expect(stale).toEqual(expect.arrayContaining([older, newer]));
    expect(stale).not.toContain(fresh);

    expect(await api.instances.list.query({ status: 'ACTIVE', limit: 1 })).toHaveLength(1);
  });

  it('a quarantined instance is listed under QUARANTINED only, with what it stopped on and its history', async () => {
    const orderId = randomUUID();
    const poison = { id: `note-${orderId}`, type: 'CustomerNoteAdded', payload: { orderId, note: 'poison: x' } };
    await expect(deliver(poison)).rejects.toThrow(/cannot handle note/);
    await sleep(1_100);
    const quarantined = await deliver(poison);
    expect(quarantined.outcome).toBe('quarantined');
    const id = instanceIdOf(quarantined);
    // Its own payment, arriving later, is skipped and says so in the history.
    const payment = { id: `payment-${orderId}`, type: 'PaymentCaptured', payload: { orderId, paymentId: 'PAY-1' } };
    expect((await deliver(payment)).outcome).toBe('skipped_quarantined');

    const listed = await api.instances.list.query({ status: 'QUARANTINED' });
    const row = listed.find((i) => i.id === id);
    expect(row).toMatchObject({
      processName: 'demo.fulfilment',
      correlationKey: orderId,
      status: 'QUARANTINED',
      currentState: 'AwaitingPayment',
      failure: { redeliveryKey: poison.id, messageType: 'CustomerNoteAdded', errorType: 'PoisonNoteError' },
    });
    expect(row?.failure?.message).toContain('cannot handle note "poison: x"');
    expect(ids(await api.instances.list.query({ status: 'ACTIVE', limit: 200 }))).not.toContain(id);

    const detail = await api.instances.get.query({ id });
    expect(detail.instance).toMatchObject({ id, status: 'QUARANTINED', failure: { redeliveryKey: poison.id } });
    expect(Date.parse(detail.instance.failure?.firstFailedAt ?? '')).toBeLessThan(
      Date.parse(detail.instance.updatedAt),
    );
    expect(detail.history.map((h) => [h.messageId, h.outcome, h.from, h.to])).toEqual([
      [poison.id, 'quarantined', 'AwaitingPayment', 'AwaitingPayment'],
      [payment.id, 'skipped_quarantined', 'AwaitingPayment', 'AwaitingPayment'],
    ]);
    // A quarantined instance accepts no operator command; the definition's are listed with their states.
    expect(detail.operatorCommands.map((c) => [c.name, c.from, c.acceptedNow])).toEqual([
      ['RetryRefund', ['ManualReview'], false],
      ['AcceptLateBooking', ['ManualReview'], false],
    ]);
    expect(detail.operatorCommands[0]?.description).toBe('Ask the payment provider for the refund again.');
  });

  it('a completed instance has its applied path in order, and a late note recorded as ignored', async () => {
    const orderId = orderWhere(shipsFine);
    const paid = await deliver({
      id: `payment-${orderId}`,
      type: 'PaymentCaptured',
      payload: { orderId, paymentId: 'PAY-2' },
    });
    const id = instanceIdOf(paid);
    let status = '';
    for (let i = 0; i < 400 && status !== 'COMPLETED'; i++) {
      status = (await api.instances.get.query({ id })).instance.status;
      if (status !== 'COMPLETED') await sleep(25);
    }
    expect(status).toBe('COMPLETED');
    await noteOn(orderId);

    const detail = await api.instances.get.query({ id });
    expect(detail.instance).toMatchObject({ currentState: 'Completed', failure: null, nextTimerDueAt: null });
    expect(detail.instance.completedAt).not.toBeNull();
    expect(detail.history.map((h) => [h.messageType, h.outcome, `${h.from}>${h.to}`])).toEqual([
      ['PaymentCaptured', 'applied', 'AwaitingPayment>ReservingInventory'],
      ['InventoryReserved', 'applied', 'ReservingInventory>BookingShipment'],
      ['ShipmentBooked', 'applied', 'BookingShipment>Completed'],
      ['CustomerNoteAdded', 'ignored', 'Completed>Completed'],
    ]);
    expect(detail.history[3]?.detail).toEqual({ reason: 'not_accepted_in_state' });
    expect(ids(await api.instances.list.query({ status: 'COMPLETED' }))).toContain(id);
    expect(ids(await api.instances.list.query({ status: 'ACTIVE', limit: 200 }))).not.toContain(id);
  });

  it('an instance waiting on a silent carrier shows its pending timeout, the outbox rows it emitted, and the states to draw', async () => {
    const orderId = orderWhere((id) => reserved(id) && !booked(id));
    const id = instanceIdOf(
      await deliver({ id: `payment-${orderId}`, type: 'PaymentCaptured', payload: { orderId, paymentId: 'PAY-3' } }),
    );
    let detail = await api.instances.get.query({ id });
    for (let i = 0; i < 400 && detail.instance.currentState !== 'BookingShipment'; i++) {
      await sleep(25);
      detail = await api.instances.get.query({ id });
    }
    expect(detail.instance.currentState).toBe('BookingShipment');
    expect(detail.timeouts).toEqual([
      expect.objectContaining({ name: 'ShipmentTimeout', expectedState: 'BookingShipment', attempts: 0 }),
    ]);
    expect(Date.parse(detail.timeouts[0]?.dueAt ?? '')).toBeGreaterThan(Date.now());
    // Newest first; the payload stays out of the page's read.
    expect(detail.outbox.map((o) => [o.type, o.destination])).toEqual([
      ['BookShipment', 'demo.shipping'],
      ['ReserveInventory', 'demo.inventory'],
    ]);
    expect(detail.outbox[0]).not.toHaveProperty('payload');
    expect(detail.process).toMatchObject({ registered: true, initial: 'AwaitingPayment' });
    expect(detail.process.states).toContain('ManualReview');
    expect(detail.process.transitions).toContainEqual(
      expect.objectContaining({ on: 'ShipmentTimeout', kind: 'timeout', from: ['BookingShipment'], to: 'Refunding' }),
    );
  });

  it('bad input gets a 400 naming the field; an unknown instance is a 404 naming it', async () => {
    expect(await rejection(api.instances.get.query({ id: 'not-a-uuid' }))).toMatchObject({
      status: 400,
      field: 'input.id',
    });
    expect(await rejection(api.instances.list.query({ status: 'STUCK' as 'ACTIVE' }))).toMatchObject({
      status: 400,
      field: 'input.status',
    });
    expect(await rejection(api.instances.list.query({ status: 'ACTIVE', limit: 201 }))).toMatchObject({
      status: 400,
      field: 'input.limit',
    });
    expect(await rejection(api.instances.list.query({ status: 'ACTIVE', staleForSeconds: -1 }))).toMatchObject({
      status: 400,
      field: 'input.staleForSeconds',
    });
    const unknownProcess = await rejection(api.instances.list.query({ status: 'ACTIVE', processName: 'no.such' }));
    expect(unknownProcess).toMatchObject({ status: 400, field: 'input.processName' });
    expect(unknownProcess.message).toContain('no.such');
    const missing = randomUUID();
    const notFound = await rejection(api.instances.get.query({ id: missing }));
    expect(notFound).toMatchObject({ status: 404 });
    expect(notFound.message).toContain(missing);
  });

  it('outbox.lag reports what waits to be published, how old it is, and what is dead', async () => {
    const before = await api.outbox.lag.query();
    const createdAt = new Date(Date.now() - 120_000);
    await plane.db.prisma.outboxMessage.create({
      data: {
        message_id: `lag-${randomUUID()}`,
        source_kind: 'test',
        source_id: 'lag',
        type: 'Nowhere',
        destination: 'no-such-route',
        payload: {},
        created_at: createdAt,
        available_at: new Date(Date.now() + 3_600_000),
      },
    });
    await plane.db.prisma.outboxMessage.create({
      data: {
        message_id: `dead-${randomUUID()}`,
        source_kind: 'test',
        source_id: 'lag',
        type: 'Nowhere',
        destination: 'no-such-route',
        payload: {},
        status: 'Dead',
        attempts: 10,
      },
    });
    const after = await api.outbox.lag.query();
    expect(after.pending).toBe(before.pending + 1);
    expect(after.dead).toBe(before.dead + 1);
    expect(after.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(119);
  });
});
