import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, defineAction, defineFlow, type Database, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import {
  gate,
  keptLogger,
  outcomesRecordedTwice,
  silentRuns,
  summary,
  starvePool,
  troubleConfig,
} from './support/liveness.ts';

/**
 * Review 53: liveness after trouble. Every pooled connection is held by the test for longer than
 * `worker.lease_seconds` (2 s) while runs are mid-flight, so the engine's run transactions give up
 * waiting (in-run-transaction.ts) and its jobs fail; then the pool is given back. Within a bounded
 * time after that (here 3 lease periods plus the machine's slack) every run must be finished or say
 * why it is not, and no step outcome may be recorded twice.
 */
const POOL = 3;
/** Three lease periods, and slack for a loaded 2-core machine. */
const AFTER_RELEASE_MS = 3 * troubleConfig.worker.lease_seconds * 1000 + 6_000;

const inStep2 = gate();
const step2Gate = gate();
let step2Entered = 0;
const kept = keptLogger();
const one = defineAction({ name: 'r53-starve-one', run: async (n: number) => n + 1 });
const two = defineAction({
  name: 'r53-starve-two',
  run: async (n: number) => {
    step2Entered += 1;
    inStep2.open();
    await step2Gate.opened;
    return n + 1;
  },
});
const three = defineAction({ name: 'r53-starve-three', run: async (n: number) => n + 1 });
const flow = defineFlow({
  name: 'r53-starve',
  version: 1,
  run: async (ctx, n: number) => ctx.action(three, await ctx.action(two, await ctx.action(one, n))),
});

const N = 60;
const inUndo = gate();
const undoGate = gate();
const undone = new Map<number, number>();
const book = defineAction({ name: 'r53-starve-book', run: async (i: number) => i });
const unbook = defineAction({
  name: 'r53-starve-unbook',
  run: async (i: number) => {
    undone.set(i, (undone.get(i) ?? 0) + 1);
    if (i === N / 2) {
      inUndo.open();
      await undoGate.opened;
    }
    return i;
  },
});
const longSaga = defineFlow({
  name: 'r53-starve-saga',
  version: 1,
  run: async (ctx) => {
    try {
      for (let i = 1; i <= N; i++) await ctx.action(book, i).compensateWith(unbook, (o) => o);
      throw new Error('the last booking was refused');
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe('review 53: a pool starved past the lease, then given back (real PostgreSQL)', () => {
  let db: Database;
  let engine: Engine;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: POOL });
    engine = createEngine({
      db,
      flows: [flow, longSaga],
      actions: [one, two, three, book, unbook],
      config: troubleConfig,
      logger: pino({ level: 'warn' }, kept.stream),
    });
  });
  afterAll(async () => {
    step2Gate.open();
    await engine?.stopWorkers(1000).catch(() => undefined);
    await engine?.stopMonitor().catch(() => undefined);
    await db?.close();
  });

  it('a run whose step finished while the pool was starved past the lease finishes, or says why, once the pool is back', async () => {
    engine.startWorkers();
    engine.startMonitor({ intervalMs: 200 });
    const { runId } = await engine.startFlow(flow, 1);
    await inStep2.opened;
    // Step 2 is running in the worker. Take every pooled connection, then let the step finish: its
    // outcome and the replay's next transaction wait for a connection that does not come.
    const starved = await starvePool(db, POOL);
    step2Gate.open();
    // Starved for 3 lease periods (a wall clock: the trouble itself, not a race being waited for).
    await new Promise((r) => setTimeout(r, 3 * troubleConfig.worker.lease_seconds * 1000));
    starved.release();
    const releasedAt = Date.now();

    let lastSilent: Awaited<ReturnType<typeof silentRuns>> = [];
    const settled = await waitFor(
      'the run to finish or say why',
      async () => {
        lastSilent = await silentRuns(db, [runId]);
        const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        return run.status === 'Completed' ? run : undefined;
      },
      AFTER_RELEASE_MS,
    ).catch(() => null);
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const steps = await db.prisma.actionRun.findMany({
      where: { run_id: runId },
      orderBy: { sequence: 'asc' },
      select: { name: true, status: true, attempts: true, claimed_by: true },
    });
    expect(
      { silent: await silentRuns(db, [runId]), run: [run.status, run.stuck_reason, run.waiting_for], steps },
      `${Date.now() - releasedAt} ms after the pool came back (silent at the last look: ${lastSilent.length})`,
    ).toMatchObject({ silent: [] });
    expect(settled?.status ?? run.status).toBe('Completed');
    expect(run.output).toBe(4);
    expect(step2Entered).toBe(1);
    // The trouble happened: a run's job failed for want of a connection past its lease.
    const jobsFailed = kept.count(/job failed/);
    expect(jobsFailed, JSON.stringify(summary(kept.lines))).toBeGreaterThan(0);
    expect(await outcomesRecordedTwice(db, [runId])).toEqual([]);
  }, 60_000);

  it('a saga rolling back 60 compensations while the pool is starved past the lease ends Compensated, each compensation run once', async () => {
    const failedBefore = kept.count(/job failed/);
    const { runId } = await engine.startFlow(longSaga, null);
    await inUndo.opened;
    const starved = await starvePool(db, POOL);
    undoGate.open();
    await new Promise((r) => setTimeout(r, 3 * troubleConfig.worker.lease_seconds * 1000));
    starved.release();
    const releasedAt = Date.now();
    await waitFor(
      'the saga to finish',
      async () => {
        const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        return run.finished_at ? run : undefined;
      },
      AFTER_RELEASE_MS,
    ).catch(() => null);
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const comps = await db.prisma.compensationRun.groupBy({ by: ['status'], where: { run_id: runId }, _count: true });
    expect(
      { silent: await silentRuns(db, [runId]), run: [run.status, run.stuck_reason, run.waiting_for], comps },
      `${Date.now() - releasedAt} ms after the pool came back`,
    ).toMatchObject({ silent: [] });
    expect(run.status).toBe('Compensated');
    expect([...undone.values()].filter((n) => n !== 1)).toEqual([]);
    expect(undone.size).toBe(N);
    expect(await outcomesRecordedTwice(db, [runId])).toEqual([]);
    expect(kept.count(/job failed/) - failedBefore, JSON.stringify(summary(kept.lines))).toBeGreaterThan(0);
  }, 60_000);
});
