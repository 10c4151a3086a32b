import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow, type Database } from '../src/index.ts';
import { createTestEngine, type TestEngine } from '../src/testing/index.ts';
import { openTestDatabase } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

const logged: { level: number; msg: string }[] = [];
const logger = pino(
  { level: 'warn' },
  { write: (line: string) => void logged.push(JSON.parse(line) as { level: number; msg: string }) },
);
const gaveUp = () => logged.some((l) => /no database connection for a run transaction/.test(l.msg));
const jobFailed = () => logged.filter((l) => /job failed/.test(l.msg));

let db: Database;
/** The pool's only connection, taken by the first action that runs and kept until a transaction gave up waiting. */
let held: Promise<pg.PoolClient> | null = null;
/**
 * Opened once the test has started all eight runs: the connection is taken only then, so the starts
 * (Prisma's, which wait for the pool's 5 s) never queue behind it. A run's first step is one
 * statement (ADR 0042): its action can begin before the eighth start was sent.
 */
let allStarted: () => void = () => undefined;
const started = new Promise<void>((resolve) => (allStarted = resolve));
const step = defineAction({
  name: 'busy-pool-step',
  run: async (n: number) => {
    if (held === null) {
      await started;
      if (held !== null) return n;
      held = db.pool!.connect();
      const client = await held;
      await waitFor('a run transaction to give up waiting for the connection', async () =>
        gaveUp() || jobFailed().length > 0 ? true : undefined,
      ).finally(() => client.release());
    }
    return n;
  },
});
const flow = defineFlow({
  name: 'busy-pool',
  version: 1,
  run: async (ctx, n: number) => {
    const a = await ctx.action(step, n);
    const b = await ctx.action(step, a);
    return ctx.action(step, b);
  },
});

/**
 * P2028 ("Unable to start a transaction in the given time") under load: a replay's transaction that
 * got no connection within its wait used to fail the job, and the run waited out its lease. A pool
 * of ONE connection, eight runs at once, and the connection held (by the first action to run) until
 * some run transaction has given up waiting for it: every run completes long before any lease ends.
 */
describe('a run transaction that gets no connection in time waits again instead of failing its job', () => {
  let t: TestEngine;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 1 });
    t = await createTestEngine({
      db,
      flows: [flow],
      actions: [step],
      logger,
      // A lease nobody waits out within the test, and the shortest wait for a connection.
      config: { worker: { concurrency: 8, lease_seconds: 3600, transaction_wait_ms: 50 } },
    });
  });
  afterAll(async () => {
    await t.close();
    await db.close();
  });

  it('eight runs on a one-connection pool all complete; no job fails', async () => {
    t.engine.startWorkers();
    const runIds: string[] = [];
    for (let n = 1; n <= 8; n++) runIds.push((await t.engine.startFlow(flow, n)).runId);
    allStarted();
    // A failed job leaves its run to wait out the lease: stop waiting at the first one.
    await waitFor(
      'every run to finish, or a job to fail',
      async () =>
        jobFailed().length > 0 || (await t.db.prisma.flowRun.count({ where: { finished_at: { not: null } } })) === 8
          ? true
          : undefined,
      120_000,
    );
    expect(held).not.toBeNull();
    expect(gaveUp()).toBe(true);
    expect(jobFailed()).toEqual([]);
    const runs = await t.db.prisma.flowRun.findMany({ where: { id: { in: runIds } } });
    const byId = new Map(runs.map((r) => [r.id, [r.status, r.output]]));
    expect(runIds.map((id) => byId.get(id))).toEqual(runIds.map((_, i) => ['Completed', i + 1]));
    expect(await t.db.prisma.actionRun.count({ where: { status: 'Completed', attempts: 1 } })).toBe(24);
  }, 180_000);
});
