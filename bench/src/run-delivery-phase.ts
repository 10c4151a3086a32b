import { randomUUID } from 'node:crypto';
import { createDatabase as openDatabase, createProcessManager } from '@sagaflow/engine';
import { orderFulfilmentProcess } from '@sagaflow/engine/testing';
import { createDatabase } from '@sagaflow/test-postgres';
import pg from 'pg';
import { pino } from 'pino';
import { progress } from './progress.ts';
import { readDatabaseCounters, waitForNoSessions } from './read-database-counters.ts';
import type { PhaseSetup } from './run-throughput-phase.ts';

export interface DeliveryResult {
  readonly concurrency: number;
  /** PaymentCaptured messages delivered through the process manager (each: new instance, outbox row, inbox, history). */
  readonly deliveries: number;
  readonly deliveryMs: number;
  /** The same rows written by hand, one transaction per message, for the same time on as many connections. */
  readonly handWritten: number;
  readonly handWrittenMs: number;
  /** Committed transactions per engine delivery (pg_stat_database, after every session exited). */
  readonly commitsPerDelivery: number;
}

/**
 * Process managers: `concurrency` loops deliver a PaymentCaptured for a new order each, for `forMs`,
 * through `deliver()` (one transaction: instance created and locked, inbox checked, state, timeout
 * table untouched, outbox row, inbox row, history row). Then, on a fresh database, the smallest
 * durable equivalent written by hand with raw SQL: the same four inserts in one transaction.
 */
export async function runDeliveryPhase(
  setup: PhaseSetup,
  options: { concurrency: number; forMs: number },
): Promise<DeliveryResult> {
  const { concurrency, forMs } = options;
  progress(`process manager: deliver() on ${concurrency} connection(s) for ${forMs / 1000} s`);
  const name = `bench_pm_c${concurrency}`;
  const url = await createDatabase(setup.adminUrl, name, { template: setup.template });
  const before = await readDatabaseCounters(setup.adminUrl, name);
  const db = await openDatabase({ kind: 'postgres', url, poolSize: concurrency + 1 });
  const pm = createProcessManager({
    db,
    processes: [orderFulfilmentProcess()],
    logger: pino({ level: 'silent' }),
  });
  let deliveries = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() - t0 < forMs) {
        const orderId = randomUUID();
        await pm.deliver('order-fulfilment', {
          id: `payment-${orderId}`,
          type: 'PaymentCaptured',
          payload: { orderId, paymentId: `PAY-${orderId.slice(0, 8)}` },
        });
        deliveries++;
      }
    }),
  );
  const deliveryMs = performance.now() - t0;
  await db.close();
  await waitForNoSessions(setup.adminUrl, name);
  const after = await readDatabaseCounters(setup.adminUrl, name);

  progress(`process manager: the same rows by hand on ${concurrency} connection(s) for ${forMs / 1000} s`);
  const refUrl = await createDatabase(setup.adminUrl, `${name}_ref`, { template: setup.template });
  const clients = await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const c = new pg.Client({ connectionString: refUrl });
      await c.connect();
      return c;
    }),
  );
  let handWritten = 0;
  const t1 = performance.now();
  try {
    await Promise.all(
      clients.map(async (c) => {
        while (performance.now() - t1 < forMs) {
          const orderId = randomUUID();
          const messageId = `payment-${orderId}`;
          await c.query('begin');
          const { rows } = await c.query<{ id: string }>(
            `insert into sagaflow.saga_instances (process_name, correlation_key, current_state, state, version)
             values ('order-fulfilment', $1, 'ReservingInventory', $2::jsonb, 1) returning id::text as id`,
            [orderId, JSON.stringify({ orderId, paymentId: 'PAY', notes: [] })],
          );
          const id = rows[0]?.id ?? '';
          await c.query(
            `insert into sagaflow.outbox (message_id, source_kind, source_id, type, destination, payload)
             values ($1, 'process', $2, 'ReserveInventory', 'inventory', $3::jsonb)`,
            [`order-fulfilment/${messageId}/0`, id, JSON.stringify({ orderId })],
          );
          await c.query(
            `insert into sagaflow.inbox (consumer, message_id, message_type, instance_id) values ('order-fulfilment', $1, 'PaymentCaptured', $2::uuid)`,
            [messageId, id],
          );
          await c.query(
            `insert into sagaflow.process_transitions (instance_id, process_name, from_state, to_state, message_id, message_type)
             values ($1::uuid, 'order-fulfilment', 'AwaitingPayment', 'ReservingInventory', $2, 'PaymentCaptured')`,
            [id, messageId],
          );
          await c.query('commit');
          handWritten++;
        }
      }),
    );
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
  const handWrittenMs = performance.now() - t1;
  return {
    concurrency,
    deliveries,
    deliveryMs,
    handWritten,
    handWrittenMs,
    commitsPerDelivery: (after.xactCommit - before.xactCommit) / Math.max(1, deliveries),
  };
}
