import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { createProcessManager, type ProcessManager } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { keptLogger } from '../review53/support/liveness.ts';
import { tallyProcess, tracesOf } from './support/tally-process.ts';

/**
 * Review 54: one instance's row is held FOR UPDATE by another session (a host transaction left open,
 * a release or repair in progress, an operator's psql) with no database timeout set. A delivery to it
 * runs in a transaction limited by `processes.transaction_timeout_ms` ("the configured wait and hold
 * limits"): it must give up within that limit (and the broker redeliver later), not hang for as long as
 * the other session holds the row; and redeliveries to it must not take the pool from the other
 * instances (ADR 0008: across instances deliveries are parallel). Once the row is let go the held
 * message is applied once.
 */
const TX_MS = 1_000;
const BOUND_MS = TX_MS + 4_000;

type Settled = { settled: string; afterMs: number } | { settled: 'not within the bound'; afterMs: number };
async function within(p: Promise<unknown>, ms: number): Promise<Settled> {
  const t0 = Date.now();
  const r = await Promise.race([
    p.then(
      (x) => `answered ${(x as { outcome: string }).outcome}`,
      (e: unknown) =>
        `threw ${String((e as Error).message)
          .split('\n')
          .at(-1)
          ?.slice(0, 120)}`,
    ),
    new Promise<'not within the bound'>((res) => setTimeout(() => res('not within the bound'), ms)),
  ]);
  return { settled: r, afterMs: Date.now() - t0 };
}

describe('review 54: deliveries to an instance held by another session (real PostgreSQL)', () => {
  let admin: Database & { url?: string };
  let db: Database;
  let pm: ProcessManager;
  let holder: pg.PoolClient | undefined;
  const kept = keptLogger();
  const pending: Promise<unknown>[] = [];
  beforeAll(async () => {
    admin = await openTestDatabase({ poolSize: 2 });
    db = await createDatabase({ kind: 'postgres', url: admin.url!, poolSize: 3 });
    pm = createProcessManager({
      db,
      processes: [tallyProcess],
      config: { transaction_timeout_ms: TX_MS, store_retry: { max_attempts: 1 } },
      logger: pino({ level: 'warn' }, kept.stream),
    });
  });
  afterAll(async () => {
    await holder?.query('rollback').catch(() => undefined);
    holder?.release();
    await Promise.allSettled(pending);
    await db?.close();
    await admin?.close();
  });

  const hold = async (key: string) => {
    holder = await admin.pool!.connect();
    await holder.query('begin');
    await holder.query(`select id from "sagaflow"."saga_instances" where correlation_key = $1 for update`, [key]);
  };
  const letGo = async () => {
    await holder!.query('rollback');
    holder!.release();
    holder = undefined;
  };
  const add = (key: string, id: string) => pm.deliver(tallyProcess, { id, type: 'Add', payload: { key, n: 1 } });

  it('a delivery to an instance another session holds gives up within transaction_timeout_ms', async () => {
    await pm.deliver(tallyProcess, { id: 'r54-a-begin', type: 'Begin', payload: { key: 'r54-a' } });
    await hold('r54-a');
    const delivering = add('r54-a', 'r54-a-add');
    pending.push(delivering.catch(() => undefined));
    const first = await within(delivering, BOUND_MS);
    await letGo();
    await Promise.allSettled([delivering]);
    // After the trouble: a redelivery applies it once (or finds it applied).
    const again = await add('r54-a', 'r54-a-add');
    expect(['applied', 'duplicate']).toContain(again.outcome);
    expect(await tracesOf(admin, ['r54-a-add'])).toEqual([
      { message_id: 'r54-a-add', applied: 1, inbox: 1, outbox: 1 },
    ]);
    expect(
      first,
      `the delivery had not given up ${BOUND_MS} ms after a ${TX_MS} ms transaction limit`,
    ).not.toMatchObject({
      settled: 'not within the bound',
    });
  });

  it('redeliveries to a held instance leave the pool to the other instances', async () => {
    await pm.deliver(tallyProcess, { id: 'r54-b-begin', type: 'Begin', payload: { key: 'r54-b' } });
    await pm.deliver(tallyProcess, { id: 'r54-c-begin', type: 'Begin', payload: { key: 'r54-c' } });
    await hold('r54-b');
    // A broker redelivers the held instance's message to three consumers (its ack wait lapsed twice).
    for (let i = 0; i < 3; i++) pending.push(add('r54-b', 'r54-b-add').catch(() => undefined));
    await waitFor('the redeliveries to wait on the held row', async () => {
      const r = await admin.pool!.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
      return r.rows[0]!.n >= 3 ? true : undefined;
    });
    const other = await within(add('r54-c', 'r54-c-add'), BOUND_MS);
    await letGo();
    await Promise.allSettled(pending);
    const again = await add('r54-b', 'r54-b-add');
    expect(['applied', 'duplicate']).toContain(again.outcome);
    expect(await tracesOf(admin, ['r54-b-add'])).toEqual([
      { message_id: 'r54-b-add', applied: 1, inbox: 1, outbox: 1 },
    ]);
    expect(other, 'another instance’s message was not applied while one instance was held').toMatchObject({
      settled: 'answered applied',
    });
  });
});
