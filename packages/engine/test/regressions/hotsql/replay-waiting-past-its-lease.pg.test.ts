import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../../src/create-engine.ts';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

const logged: string[] = [];
const logger = pino({ level: 'warn' }, { write: (line: string) => void logged.push(line) });
const gaveUp = () => logged.filter((l) => l.includes('no database connection for a run transaction')).length;

const ran: string[] = [];
let dbA: Database;
/** Engine A's only connection, taken by the test while A's replay is between two steps. */
let heldA: Promise<pg.PoolClient> | null = null;
/** How many run transactions had given up waiting when the first step took A's connection. */
let gaveUpBeforeHold = -1;
const first = defineAction({
  name: 'lease-first',
  run: async () => {
    ran.push('first');
    if (heldA === null) {
      heldA = dbA.pool!.connect();
      await heldA;
      gaveUpBeforeHold = gaveUp();
    }
    return 1;
  },
});
const second = defineAction({
  name: 'lease-second',
  run: async () => {
    ran.push('second');
    return 2;
  },
});
const flow = defineFlow({
  name: 'lease-overrun',
  version: 1,
  run: async (ctx) => (await ctx.action(first, null).run()) + (await ctx.action(second, null).run()),
});

/**
 * Review of ADR 0037 decision 3: a run transaction that gets no connection is started again "for up
 * to the lease", measured from its own first attempt, not from the job's lease: a replay can outlive
 * its job's lease, and the job is then delivered again. Engine A's replay has run its first step and
 * waits for a connection (its pool's only one is held); the job's lease runs out on the business
 * clock; engine B gets the job and replays the run while A still waits; then A gets its connection.
 * The duplicate replay must change nothing: each step runs once, the run ends Completed once, and no
 * history row is written twice or after the terminal event.
 */
describe('a replay that waits for a connection past its job lease, and the job delivered again', () => {
  let dbB: Database;
  let a: Engine;
  let b: Engine;
  const clock = new TestClock();
  beforeAll(async () => {
    const base = await openTestDatabase();
    dbB = base;
    dbA = await createDatabase({ kind: 'postgres', url: (base as { url?: string }).url!, poolSize: 1 });
    const config = {
      // No worker counts as dead during the test: only the job's lease runs out.
      worker: { lease_seconds: 30, transaction_wait_ms: 50, poll_interval_ms: 20, dead_after_seconds: 3600 },
      logging: { anomaly_level: null },
    };
    a = createEngine({ db: dbA, flows: [flow], actions: [first, second], logger, clock, config });
    b = createEngine({
      db: dbB,
      flows: [flow],
      actions: [first, second],
      logger: pino({ level: 'silent' }),
      clock,
      config,
    });
  });
  afterAll(async () => {
    await b.stopWorkers(1000);
    await a.stopWorkers(1000);
    await dbA.close();
    await dbB.close();
  });

  it('each step runs once and the run ends once', async () => {
    a.startWorkers();
    const { runId } = await a.startFlow(flow, null);
    // A's first step holds A's only connection: the transaction after it (its outcome and the next
    // claim) gives up waiting at least once before the job's lease is made to run out.
    await waitFor('A to wait for a connection after its first step', async () =>
      gaveUpBeforeHold >= 0 && gaveUp() > gaveUpBeforeHold ? true : undefined,
    );
    const job = await dbB.prisma.job.findFirstOrThrow({ where: { run_id: runId } });
    clock.advance(31_000);
    b.startWorkers();
    // B takes the job whose lease ran out, replays the run while A still waits, and is done with it.
    await waitFor(
      'B to take the job and be done with it',
      async () => ((await dbB.prisma.job.findUnique({ where: { id: job.id } })) === null ? true : undefined),
      60_000,
    );
    (await heldA!).release();
    await waitFor('the run to finish', async () => {
      const r = await dbB.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      return r.finished_at ? r : undefined;
    });
    // Both pools idle: whatever either replay still had to write is written.
    await a.stopWorkers(10_000);
    await b.stopWorkers(10_000);
    const run = await dbB.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect({ status: run.status, output: run.output }).toEqual({ status: 'Completed', output: 3 });
    expect(ran).toEqual(['first', 'second']);
    const steps = await dbB.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    expect(steps.map((s) => [s.sequence, s.status, s.attempts])).toEqual([
      [1, 'Completed', 1],
      [2, 'Completed', 1],
    ]);
    const types = (await dbB.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } })).map(
      (e) => `${e.type}${e.sequence === null ? '' : ` ${e.sequence}`}`,
    );
    expect(types.at(-1)).toBe('run.completed');
    expect(types.filter((t) => t.startsWith('run.') && t !== 'run.stuck' && t !== 'run.unstuck')).toEqual([
      'run.started',
      'run.running',
      'run.completed',
    ]);
    expect(new Set(types.filter((t) => t.startsWith('step.'))).size).toBe(
      types.filter((t) => t.startsWith('step.')).length,
    );
    expect(await dbB.prisma.job.count({ where: { run_id: runId } })).toBe(0);
  }, 120_000);
});
