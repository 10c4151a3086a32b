import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/create-database.ts';
import { defineAction, defineFlow, type Database } from '../src/index.ts';
import { rawDb, type RawDb } from '../src/db/raw-db.ts';
import { beatWorker } from '../src/store/beat-worker.ts';
import { claimJobs } from '../src/store/claim-jobs.ts';
import { deleteJob } from '../src/store/delete-job.ts';
import { insertStartedRun, type StartedRun } from '../src/store/insert-started-run.ts';
import { insertStartedRunsStatement } from '../src/store/insert-started-runs.ts';
import { createTestEngine, type TestEngine } from '../src/testing/index.ts';
import { openTestDatabase } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

const logged: { level: number; msg: string }[] = [];
const logger = pino(
  { level: 'warn' },
  { write: (line: string) => void logged.push(JSON.parse(line) as { level: number; msg: string }) },
);

const executions = new Map<number, number>();
const step = defineAction({
  name: 'pool-statements-step',
  run: (n: number) => {
    executions.set(n, (executions.get(n) ?? 0) + 1);
    return Promise.resolve(n);
  },
});
const oneStep = defineFlow({
  name: 'pool-statements',
  version: 1,
  run: async (ctx, n: number) => await ctx.action(step, n),
});
/** Parks on a signal: its replay returns without a finish, so the pool acknowledges its job itself. */
const parks = defineFlow({
  name: 'pool-statements-parks',
  version: 1,
  run: async (ctx) => ctx.awaitSignal('never', { timeoutSeconds: 3_600 }),
});

/** The text a store function sends (the driver names a statement after its text). */
async function textOf(send: (db: RawDb) => Promise<unknown>): Promise<string> {
  let text = '';
  await send(
    rawDb(async (statement) => {
      text = statement.text;
      return { rows: [], rowCount: 0 };
    }),
  ).catch(() => undefined);
  return text;
}

/** The statements PostgreSQL holds prepared, by name, on the connection that answers. */
const preparedOn = (db: Database) =>
  db.driver.query<{ name: string; statement: string }>('select name, statement from pg_prepared_statements');
const backendOf = async (db: Database) =>
  (await db.driver.query<{ pid: number }>('select pg_backend_pid() as pid'))[0]!.pid;

/**
 * The engine's pool has ONE connection (the listener has its own), so what it holds prepared is what
 * the start and the worker pool sent through it. Prisma's raw path sends unnamed statements, which
 * PostgreSQL does not keep: before ADR 0043 none of these were there.
 */
describe('the start and the worker pool send their statements through the driver', () => {
  let db: Database;
  let starter: Database;
  let t: TestEngine;
  /** A run of the one-step flow as another process starts it: its wake due now, for any worker. */
  const startOf = (n: number): StartedRun => ({
    flowName: oneStep.name,
    flowVersion: 1,
    input: n,
    businessKey: null,
    tags: [],
    expiresAt: null,
    runTimeoutAt: null,
    now: t.clock.now(),
    lease: null,
  });
  /** The starts' statement for one start (ADR 0047, 0053), which a start through the engine sends. */
  const startText = () => insertStartedRunsStatement([startOf(0)]).text;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 1 });
    starter = await createDatabase({ kind: 'postgres', url: (db as { url?: string }).url! });
    t = await createTestEngine({
      db,
      flows: [oneStep, parks],
      actions: [step],
      logger,
      config: { worker: { concurrency: 1, poll_interval_ms: 50 } },
    });
  });
  afterAll(async () => {
    await t?.close();
    await starter?.close();
    await db?.close();
  });

  it('a start, a claim, an acknowledgement and a heartbeat are named prepared statements', async () => {
    t.engine.startWorkers();
    const { runId } = await t.engine.startFlow(parks, null);
    const workerId = t.engine.runtime.workerId;
    await waitFor('the parked run to have its job acknowledged', async () => {
      const run = await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      const held = await t.db.prisma.job.count({ where: { run_id: runId, locked_by: workerId } });
      return run.status === 'Waiting' && held === 0 ? true : undefined;
    });
    // A run started elsewhere is claimed by the pool's loop (a claim that finds it, not a hand-off).
    const other = await insertStartedRun(starter.prisma, startOf(7));
    await waitFor('the claimed run to complete', async () =>
      (await t.engine.getRun(other.runId))?.run.status === 'Completed' ? true : undefined,
    );
    const prepared = await preparedOn(db);
    const expectNamed = async (what: string, send: (db: RawDb) => Promise<unknown>) => {
      const text = await textOf(send);
      expectPrepared(what, text);
    };
    const expectPrepared = (what: string, text: string) => {
      const names = prepared.filter((p) => p.statement === text).map((p) => p.name);
      expect({ what, names }).toEqual({ what, names: [expect.stringMatching(/^sf_/)] });
    };
    const args = { workerId, leaseSeconds: 1, limit: 1, now: new Date(), id: 1n };
    expectPrepared('the start', startText());
    await expectNamed('the claim', (d) => claimJobs(d, args));
    await expectNamed('the acknowledgement', (d) => deleteJob(d, args));
    await expectNamed('the heartbeat', (d) => beatWorker(d, args));
  });

  it('a pool whose connection is killed between claims keeps claiming and running on a new one', async () => {
    t.engine.startWorkers();
    const failedJobs = () => logged.filter((l) => /job failed/.test(l.msg));
    for (let n = 1; n <= 3; n++) {
      // The pool's only connection, now idle between two claims, is ended by the server.
      const killed = await backendOf(db);
      await starter.driver.query('select pg_terminate_backend($1)', [killed]);
      await waitFor('the killed backend to be gone', async () =>
        (await starter.driver.query('select 1 from pg_stat_activity where pid = $1', [killed])).length === 0
          ? true
          : undefined,
      );
      // Started by another process: the pool's next statement is the claim that finds it.
      const { runId } = await insertStartedRun(starter.prisma, startOf(100 + n));
      const run = await waitFor('the run started after the kill to complete', async () => {
        const detail = await t.engine.getRun(runId);
        return detail?.run.status === 'Completed' ? detail.run : undefined;
      });
      expect(run.output).toBe(100 + n);
      expect(executions.get(100 + n)).toBe(1);
      // A fresh connection, which prepared the claim again under its name.
      expect(await backendOf(db)).not.toBe(killed);
      expect((await preparedOn(db)).some((p) => p.statement.includes('update "sagaflow"."jobs" j'))).toBe(true);
    }
    expect(failedJobs()).toEqual([]);
    expect(await t.db.prisma.job.count({ where: { locked_by: { not: null } } })).toBe(0);
  });
  it('a start prepared before a column was added to flow_runs is prepared afresh and succeeds', async () => {
    await t.engine.stopWorkers();
    const nameOfStart = async () =>
      (await preparedOn(db)).filter((p) => p.statement === startText()).map((p) => p.name);
    await t.engine.startFlow(oneStep, 1);
    const [before] = await nameOfStart();
    // A migration applied while this process runs: the start returns `flow_runs` whole.
    await starter.driver.exec('alter table "sagaflow"."flow_runs" add column pool_statements_note text');
    const { runId } = await t.engine.startFlow(oneStep, 2);
    expect(await t.db.prisma.flowRun.count({ where: { id: runId } })).toBe(1);
    // Renamed, and prepared under its new name (the refusing connection was destroyed with the error).
    // The next generation of its name: `_g1` after the first name, `_gN+1` after `_gN` (an earlier file in this
    // worker may have renamed it already: the names are the process's, ADR 0081).
    const [base, generation] = /^(sf_[\w-]{22})(?:_g(\d+))?$/.exec(before!)!.slice(1) as [string, string | undefined];
    expect(await nameOfStart()).toEqual([`${base}_g${Number(generation ?? 0) + 1}`]);
  });
});
