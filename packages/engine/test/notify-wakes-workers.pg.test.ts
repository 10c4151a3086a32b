import pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createDatabase,
  createEngine,
  defineAction,
  defineFlow,
  type Database,
  type Engine,
  type EngineConfigInput,
} from '../src/index.ts';
import { openTestDatabase } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

/** Executions of each step, by run: every test asserts exactly one each. */
const executions = new Map<string, number>();
const count = (key: string) => executions.set(key, (executions.get(key) ?? 0) + 1);
const first = defineAction({
  name: 'notify-first',
  run: async (input: { key: string }) => (count(`${input.key}:1`), 1),
});
const second = defineAction({
  name: 'notify-second',
  run: async (input: { key: string }) => (count(`${input.key}:2`), 2),
});
const flow = defineFlow({
  name: 'notify-flow',
  version: 1,
  run: async (ctx, input: { key: string }) => (await ctx.action(first, input)) + (await ctx.action(second, input)),
});

/** Longer than any wait below: a run these tests see finish was woken by a NOTIFY, not by a poll. */
const slowPoll = { poll_interval_ms: 60_000, heartbeat_interval_ms: 600_000 };
const workerApp = 'notify-worker';

interface Captured {
  level: number;
  msg: string;
}

/**
 * ADR 0038 on a real PostgreSQL: a job queued by another engine (its own connection pool, as another
 * process would have) wakes a worker pool through LISTEN/NOTIFY; a listener whose connection is
 * killed listens again and polls once, so the jobs queued meanwhile still run; several pools batch-
 * claiming one backlog never run a step twice and leave nothing behind.
 */
describe('workers wake on NOTIFY and batch their claims (real PostgreSQL)', () => {
  let starterDb: Database & { url?: string };
  let starter: Engine;
  const opened: { engine: Engine; db: Database }[] = [];

  beforeAll(async () => {
    starterDb = await openTestDatabase({ poolSize: 2 });
    starter = createEngine({
      db: starterDb,
      flows: [flow],
      actions: [first, second],
      logger: pino({ level: 'silent' }),
    });
  });
  // A test that failed must not leave its pool (and its listener) running into the next one.
  afterEach(async () => {
    for (const { engine, db } of opened.splice(0)) {
      await engine.stopWorkers(5_000).catch(() => undefined);
      await db.close().catch(() => undefined);
    }
  });
  afterAll(async () => {
    await starterDb.close();
  });

  /** A worker engine on its own pool, named in pg_stat_activity so the test can see what it sends. */
  const openWorker = async (config: EngineConfigInput, logs: Captured[] = []) => {
    const url = new URL(starterDb.url!);
    url.searchParams.set('application_name', workerApp);
    const db = await createDatabase({ kind: 'postgres', url: url.toString(), poolSize: 6 });
    // Warm connections: the pool's first statements then need no new connection, the listener does.
    await Promise.all([1, 2, 3].map(() => db.pool!.query('select pg_sleep(0.02)')));
    const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line) as Captured) });
    const engine = createEngine({ db, flows: [flow], actions: [first, second], logger, config });
    opened.push({ engine, db });
    return engine;
  };

  const activity = <T>(sql: string, params: unknown[] = []) => starterDb.driver.query<T>(sql, params);

  /** The listener's backend, once its LISTEN is in place. */
  const listening = () =>
    waitFor('the job listener to LISTEN', async () => {
      const [row] = await activity<{ pid: number }>(
        `select pid from pg_stat_activity
          where datname = current_database() and application_name = 'sagaflow-listener'
            and state = 'idle' and query ilike 'listen%' order by backend_start desc limit 1`,
      );
      return row;
    });

  /**
   * Waits until the worker's loop has claimed after its LISTEN took hold and sends nothing: from here
   * on, with a 60 s poll, only a notification can make it claim again.
   */
  const loopAsleep = async () => {
    const listener = await listening();
    await waitFor('the worker loop to claim after LISTEN and fall asleep', async () => {
      const [row] = await activity<{ claimed: boolean; busy: number }>(
        `select exists (select 1 from pg_stat_activity
                         where datname = current_database() and application_name = $1 and state = 'idle'
                           and query like '%update "sagaflow"."jobs" j%'
                           and state_change > (select state_change from pg_stat_activity where pid = $2)) as claimed,
                (select count(*)::int from pg_stat_activity
                  where datname = current_database() and application_name = $1 and state <> 'idle') as busy`,
        [workerApp, listener.pid],
      );
      return row?.claimed && row.busy === 0 ? true : undefined;
    });
    return listener;
  };

  const completed = (runIds: readonly string[], what: string, timeoutMs = 30_000) =>
    waitFor(
      what,
      async () => {
        const done = await starterDb.prisma.flowRun.count({ where: { id: { in: [...runIds] }, status: 'Completed' } });
        return done === runIds.length ? true : undefined;
      },
      timeoutMs,
    );

  it('a run started by another engine is run by a sleeping pool at once: the NOTIFY woke it, not the 60 s poll', async () => {
    const worker = await openWorker({ worker: slowPoll });
    worker.startWorkers();
    await loopAsleep();
    const { runId } = await starter.startFlow(flow, { key: 'woken' });
    // 30 s, half the poll: without the NOTIFY the pool would still be asleep.
    await completed([runId], 'the run to complete on the other engine');
    expect([executions.get('woken:1'), executions.get('woken:2')]).toEqual([1, 1]);
  });

  it('jobs queued while the listener is down still run: it listens again and polls once', async () => {
    const logs: Captured[] = [];
    const worker = await openWorker({ worker: { ...slowPoll, concurrency: 2 } }, logs);
    worker.startWorkers();
    const before = await loopAsleep();
    const dbName = (await starterDb.driver.query<{ db: string }>('select current_database() as db'))[0]!.db;
    const quoted = `"${dbName.replaceAll('"', '""')}"`;
    // No new connection may open while the jobs are queued: the listener cannot hear them, and
    // cannot come back until the test lets it (the pools' open connections keep working).
    const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
    await admin.connect();
    await admin.query(`alter database ${quoted} with allow_connections false`);
    const runIds: string[] = [];
    try {
      await starterDb.driver.query('select pg_terminate_backend($1)', [before.pid]);
      await waitFor('the listener to fail to listen again', async () =>
        logs.some((l) => l.msg.startsWith('job listener could not listen')) ? true : undefined,
      );
      for (let i = 0; i < 10; i++) runIds.push((await starter.startFlow(flow, { key: `lost-${i}` })).runId);
    } finally {
      await admin.query(`alter database ${quoted} with allow_connections true`);
      await admin.end();
    }
    // Nothing will notify about these ten: only the poll the listener makes when it is back runs them.
    await completed(runIds, 'the runs queued while the listener was down');
    const after = await listening();
    expect(after.pid).not.toBe(before.pid);
    expect(logs.some((l) => l.level === 40 && l.msg.startsWith('job listener lost its connection'))).toBe(true);
    expect(logs.some((l) => l.msg.startsWith('job listener listening again'))).toBe(true);
    // And the listener that came back hears the next one.
    await loopAsleep();
    const { runId } = await starter.startFlow(flow, { key: 'lost-next' });
    await completed([runId], 'a run started after the listener came back');
    for (const key of [...runIds.map((_, i) => `lost-${i}`), 'lost-next'])
      expect([executions.get(`${key}:1`), executions.get(`${key}:2`)]).toEqual([1, 1]);
  });

  it('three pools batch-claiming one backlog of 500 runs run every step exactly once and leave no job behind', async () => {
    const runs = 500;
    const runIds: string[] = [];
    for (let i = 0; i < runs; i++) runIds.push((await starter.startFlow(flow, { key: `race-${i}` })).runId);
    const workers = await Promise.all(
      [1, 2, 3].map(() => openWorker({ worker: { concurrency: 8, poll_interval_ms: 50 } })),
    );
    for (const w of workers) w.startWorkers();
    // Progress, not time: fails only if no run finishes for a whole minute.
    let done = 0;
    let lastProgress = Date.now();
    while (done < runs) {
      const now = await starterDb.prisma.flowRun.count({ where: { id: { in: runIds }, status: 'Completed' } });
      if (now > done) [done, lastProgress] = [now, Date.now()];
      if (Date.now() - lastProgress > 60_000) throw new Error(`stalled at ${done} of ${runs} runs completed`);
      await new Promise((r) => setTimeout(r, 100));
    }
    for (let i = 0; i < runs; i++)
      expect([executions.get(`race-${i}:1`), executions.get(`race-${i}:2`)], `race-${i}`).toEqual([1, 1]);
    expect(await starterDb.prisma.job.count()).toBe(0);
    const ours = { run_id: { in: runIds } };
    const steps = await starterDb.prisma.actionRun.groupBy({ by: ['claimed_by'], where: ours, _count: true });
    // Every pool took part: the claims raced.
    expect(new Set(steps.map((s) => s.claimed_by))).toEqual(new Set(workers.map((w) => w.runtime.workerId)));
    expect(await starterDb.prisma.actionRun.count({ where: { ...ours, attempts: { not: 1 } } })).toBe(0);
  }, 600_000);
});
