import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { createProcessManager, type ProcessManager } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { keptLogger, starvePool } from '../review53/support/liveness.ts';
import { tallyProcess, tracesOf } from './support/tally-process.ts';

/**
 * Review 54: process managers after trouble. Several callers deliver messages (each retries a
 * delivery that threw, as a broker redelivers), timeouts come due and the scheduler sweeps them,
 * while (1) every engine connection is ended with pg_terminate_backend after every fifth committed
 * transition and in the middle of every seventh delivery transaction, or (2) the pool is starved for
 * three seconds. Afterwards, within a bound: every message applied exactly once (one applied
 * transition, one inbox row, one outbox row, the right total), every due timeout fired once.
 */
const callers = 3;
const perCaller = 12;
const AFTER_TROUBLE_MS = 15_000;

async function deliverUntilTaken(pm: ProcessManager, message: { id: string; type: string; payload: object }) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await pm.deliver(tallyProcess, message);
    } catch (err) {
      if (attempt > 400) throw err;
      await sleep(50);
    }
  }
}

describe('review 54: process managers under ended connections and a starved pool (real PostgreSQL)', () => {
  let admin: Database & { url?: string };
  const opened: Database[] = [];
  beforeAll(async () => {
    admin = await openTestDatabase({ poolSize: 1 });
  });
  afterAll(async () => {
    for (const d of opened) await d.close().catch(() => undefined);
    await admin?.close();
  });

  const endEngineConnections = async () =>
    (
      await admin.pool!.query<{ n: number }>(
        `select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend') t`,
      )
    ).rows[0]!.n;

  it('messages and timeouts delivered while connections are ended after every fifth transition are each applied once', async () => {
    const db = await createDatabase({ kind: 'postgres', url: admin.url!, poolSize: 4 });
    opened.push(db);
    const kept = keptLogger();
    let locks = 0;
    let midCuts = 0;
    const pm = createProcessManager({
      db,
      processes: [tallyProcess],
      // Quarantine off here: with it on, a connection error the store retry does not know quarantines
      // the instance (see an-ended-connection-does-not-quarantine-an-instance.pg.test.ts, defect 4).
      config: { timeout_retry_seconds: 1, timeout_retry_max_seconds: 2 },
      logger: pino({ level: 'warn' }, kept.stream),
      faults: {
        afterLock: async () => {
          if (++locks % 7 === 0) {
            await endEngineConnections();
            midCuts++;
          }
        },
      },
    });
    const keys = Array.from({ length: callers }, (_, c) => `r54-cut-${c}`);
    for (const key of keys) await deliverUntilTaken(pm, { id: `${key}-begin`, type: 'Begin', payload: { key } });
    pm.startTimeoutScheduler({ intervalMs: 100 });
    let stop = false;
    let afterCommitCuts = 0;
    const cutter = (async () => {
      let next = 5;
      while (!stop) {
        const n = (
          await admin.pool!.query<{ n: number }>(
            `select count(*)::int as n from "sagaflow"."process_transitions" where outcome = 'applied'`,
          )
        ).rows[0]!.n;
        if (n >= next) {
          await endEngineConnections();
          afterCommitCuts++;
          next = n + 5;
        }
        await sleep(20);
      }
    })();
    const ids: string[] = [];
    await Promise.all(
      keys.map(async (key) => {
        for (let i = 1; i <= perCaller; i++) {
          const id = `${key}-add-${i}`;
          ids.push(id);
          await deliverUntilTaken(pm, { id, type: 'Add', payload: { key, n: i } });
        }
      }),
    );
    const timeoutIds = await waitFor(
      'each instance’s Nudge delivered',
      async () => {
        const r = await admin.pool!.query<{ id: string; status: string }>(
          `select id::text, status from "sagaflow"."process_timeouts"`,
        );
        return r.rows.length === callers && r.rows.every((t) => t.status === 'Delivered')
          ? r.rows.map((t) => t.id)
          : undefined;
      },
      AFTER_TROUBLE_MS,
    );
    stop = true;
    await cutter;
    await pm.stopTimeoutScheduler();

    expect(afterCommitCuts + midCuts, 'the trouble happened').toBeGreaterThanOrEqual(4);
    const traces = await tracesOf(admin, [...ids, ...timeoutIds, ...keys.map((k) => `${k}-begin`)]);
    const wrong = traces.filter(
      (t) => t.applied !== 1 || t.inbox !== 1 || t.outbox !== (t.message_id.endsWith('-begin') ? 0 : 1),
    );
    const why = await admin.pool!.query(
      `select correlation_key, status, current_state, failure_redelivery_key, failure_error_type, failure_message,
              (select count(*)::int from "sagaflow"."process_transitions" t where t.instance_id = i.id and t.outcome <> 'applied') as other_rows
         from "sagaflow"."saga_instances" i where process_name = 'r54-tally' and correlation_key like 'r54-cut-%'`,
    );
    expect(wrong, `messages not applied exactly once; instances: ${JSON.stringify(why.rows)}`).toEqual([]);
    const instances = await admin.pool!.query<{
      status: string;
      data: { total: number; nudges: number };
      failure_redelivery_key: string | null;
    }>(
      `select status, state as data, failure_redelivery_key from "sagaflow"."saga_instances" where process_name = 'r54-tally'`,
    );
    const sum = (perCaller * (perCaller + 1)) / 2;
    expect(
      instances.rows.map((r) => ({
        status: r.status,
        total: r.data.total,
        nudges: r.data.nudges,
        failure: r.failure_redelivery_key,
      })),
    ).toEqual(keys.map(() => ({ status: 'ACTIVE', total: sum, nudges: 1, failure: null })));
    await db.close();
  });

  it('messages and timeouts delivered while the pool is starved for three seconds are each applied once afterwards', async () => {
    const db = await createDatabase({ kind: 'postgres', url: admin.url!, poolSize: 3 });
    opened.push(db);
    const kept = keptLogger();
    const pm = createProcessManager({
      db,
      processes: [tallyProcess],
      config: {
        quarantine_after_seconds: 1,
        timeout_retry_seconds: 1,
        timeout_retry_max_seconds: 2,
        transaction_timeout_ms: 500,
      },
      logger: pino({ level: 'warn' }, kept.stream),
    });
    const keys = Array.from({ length: callers }, (_, c) => `r54-starve-${c}`);
    for (const key of keys) await deliverUntilTaken(pm, { id: `${key}-begin`, type: 'Begin', payload: { key } });
    pm.startTimeoutScheduler({ intervalMs: 100 });
    const starved = await starvePool(db, 3);
    const ids: string[] = [];
    const errors: string[] = [];
    const delivering = Promise.all(
      keys.map(async (key) => {
        for (let i = 1; i <= perCaller; i++) {
          const id = `${key}-add-${i}`;
          ids.push(id);
          for (;;) {
            try {
              await pm.deliver(tallyProcess, { id, type: 'Add', payload: { key, n: i } });
              break;
            } catch (err) {
              errors.push(String((err as Error).message).slice(0, 120));
              await sleep(50);
            }
          }
        }
      }),
    );
    // The timeouts come due (1 s) and the callers fail while the pool is held: three seconds of trouble.
    await sleep(3000);
    expect(errors.length, 'callers were refused while the pool was starved').toBeGreaterThan(0);
    starved.release();
    const started = Date.now();
    await delivering;
    const timeoutIds = await waitFor(
      'each instance’s Nudge delivered',
      async () => {
        const r = await admin.pool!.query<{ id: string; status: string }>(
          `select t.id::text, t.status from "sagaflow"."process_timeouts" t join "sagaflow"."saga_instances" i on i.id = t.instance_id where i.correlation_key like 'r54-starve-%'`,
        );
        return r.rows.length === callers && r.rows.every((t) => t.status === 'Delivered')
          ? r.rows.map((t) => t.id)
          : undefined;
      },
      AFTER_TROUBLE_MS,
    );
    const took = Date.now() - started;
    await pm.stopTimeoutScheduler();
    expect(took).toBeLessThan(AFTER_TROUBLE_MS);
    const traces = await tracesOf(admin, [...ids, ...timeoutIds]);
    expect(traces.filter((t) => t.applied !== 1 || t.inbox !== 1 || t.outbox !== 1)).toEqual([]);
    const instances = await admin.pool!.query<{
      status: string;
      data: { total: number; nudges: number };
      failure_redelivery_key: string | null;
    }>(
      `select status, state as data, failure_redelivery_key from "sagaflow"."saga_instances" where correlation_key like 'r54-starve-%'`,
    );
    const sum = (perCaller * (perCaller + 1)) / 2;
    expect(
      instances.rows.map((r) => ({
        status: r.status,
        total: r.data.total,
        nudges: r.data.nudges,
        failure: r.failure_redelivery_key,
      })),
      `${JSON.stringify(errors.slice(0, 3))}`,
    ).toEqual(keys.map(() => ({ status: 'ACTIVE', total: sum, nudges: 1, failure: null })));
    await db.close();
  });
});
