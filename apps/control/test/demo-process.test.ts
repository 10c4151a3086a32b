import {
  createDatabase,
  startOutboxPublisher,
  type Database,
  type Engine,
  type OutboxPublisher,
} from '@sagaflow/engine';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { testDatabaseUrl } from './support/test-plane.ts';
import { createControlEngine } from '../src/control-engine.ts';
import { fulfilmentProcess } from '../src/demo/fulfilment-process.ts';
import { fulfilmentRoutes } from '../src/demo/fulfilment-services.ts';
import { booked, orderWhere, refunded, reserved } from './support/demo-orders.ts';
import { eventually } from './support/seed-known-set.ts';
import { parseEnv } from '../src/env.ts';

describe('the demo fulfilment process, end to end through the outbox (PostgreSQL)', () => {
  let db: Database;
  let engine: Engine;
  let publisher: OutboxPublisher;
  let stopServices: () => void;
  beforeAll(async () => {
    const url = await testDatabaseUrl('demo_pm');
    db = await createDatabase({ kind: 'postgres', url });
    const env = parseEnv({
      DATABASE_URL: url,
      SAGAFLOW_DEMO: '1',
      SAGAFLOW_ENGINE_CONFIG: JSON.stringify({ processes: { quarantine_after_seconds: 1 } }),
    });
    const logger = pino({ level: 'silent' });
    engine = createControlEngine(db, env, logger);
    const services = fulfilmentRoutes(engine, logger);
    stopServices = services.stop;
    publisher = startOutboxPublisher({ db, routes: services.routes, config: { poll_interval_ms: 20 }, logger });
  });
  afterAll(async () => {
    stopServices();
    await publisher.stop();
    await db.close();
  });

  const pay = (orderId: string) =>
    engine.processes.deliver(fulfilmentProcess, {
      id: `payment-${orderId}`,
      type: 'PaymentCaptured',
      payload: { orderId, paymentId: `PAY-${orderId.slice(0, 8)}` },
    });
  const instanceOf = async (orderId: string) =>
    db.prisma.sagaInstance.findFirstOrThrow({ where: { process_name: 'demo.fulfilment', correlation_key: orderId } });
  const settlesIn = async (orderId: string, state: string) => {
    for (let i = 0; i < 400; i++) {
      const row = await instanceOf(orderId);
      if (row.current_state === state) return row;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(
      `instance of ${orderId} did not reach ${state}; it is ${(await instanceOf(orderId)).current_state}`,
    );
  };
  const path = async (instanceId: string) =>
    (
      await db.prisma.processTransition.findMany({
        where: { instance_id: instanceId, outcome: { in: ['applied', 'repair'] } },
        orderBy: { id: 'asc' },
      })
    ).map((t) => `${t.from_state}>${t.to_state}`);

  it('a paid order is reserved, shipped and completed by the simulated services, each command published once', async () => {
    const orderId = orderWhere((id) => reserved(id) && booked(id));
    expect((await pay(orderId)).outcome).toBe('applied');
    const done = await settlesIn(orderId, 'Completed');
    expect(done.status).toBe('COMPLETED');
    expect(await path(done.id)).toEqual([
      'AwaitingPayment>ReservingInventory',
      'ReservingInventory>BookingShipment',
      'BookingShipment>Completed',
    ]);
    // The carrier's reply completes the instance from inside the BookShipment delivery, before the publisher
    // marks that row Published (it does so once the delivery returns): wait for the publisher to settle
    // every row of the instance, then judge them in the order they were written (seq).
    const outbox = await eventually("the publisher to settle the instance's outbox rows", async () => {
      const rows = await db.prisma.outboxMessage.findMany({ where: { source_id: done.id }, orderBy: { seq: 'asc' } });
      return rows.some((o) => o.status === 'Pending') ? undefined : rows;
    });
    expect(outbox.map((o) => [o.type, o.status])).toEqual([
      ['ReserveInventory', 'Published'],
      ['BookShipment', 'Published'],
    ]);
    // The payment redelivered: the inbox turns it into a no-op.
    expect((await pay(orderId)).outcome).toBe('duplicate');
  });

  it('a rejected reservation is refunded; a failed refund lands in ManualReview, and the operator retry compensates', async () => {
    const orderId = orderWhere((id) => !reserved(id) && !refunded(id));
    await pay(orderId);
    const review = await settlesIn(orderId, 'ManualReview');
    expect(review.status).toBe('ACTIVE');
    const repair = await engine.processes.runOperatorCommand(fulfilmentProcess, review.id, {
      command: 'RetryRefund',
      input: {},
      expectedState: 'ManualReview',
      operator: 'ops@example.com',
      reason: 'the provider is back',
      idempotencyKey: `retry-${orderId}`,
    });
    expect(repair).toMatchObject({ outcome: 'applied', from: 'ManualReview', to: 'Refunding' });
    const compensated = await settlesIn(orderId, 'Compensated');
    expect(compensated.status).toBe('COMPLETED');
    expect(await path(compensated.id)).toEqual([
      'AwaitingPayment>ReservingInventory',
      'ReservingInventory>Refunding',
      'Refunding>ManualReview',
      'ManualReview>Refunding',
      'Refunding>Compensated',
    ]);
  });

  it('a poison note fails while the budget lasts, then quarantines its instance; the others go on', async () => {
    const orderId = orderWhere((id) => reserved(id) && booked(id));
    // Not paid yet: the instance is created by the note's failure, and waits in AwaitingPayment.
    const poison = {
      id: `note-${orderId}`,
      type: 'CustomerNoteAdded',
      payload: { orderId, note: 'poison: unparseable' },
    };
    await expect(engine.processes.deliver(fulfilmentProcess, poison)).rejects.toThrow(/cannot handle note/);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await engine.processes.deliver(fulfilmentProcess, poison)).outcome).toBe('quarantined');
    const row = await instanceOf(orderId);
    expect(row).toMatchObject({ status: 'QUARANTINED', failure_redelivery_key: poison.id });
    // Its own later messages are skipped; another order is untouched by it.
    expect((await pay(orderId)).outcome).toBe('skipped_quarantined');
    const other = orderWhere((id) => reserved(id) && booked(id));
    await pay(other);
    expect((await settlesIn(other, 'Completed')).status).toBe('COMPLETED');
  });
});
