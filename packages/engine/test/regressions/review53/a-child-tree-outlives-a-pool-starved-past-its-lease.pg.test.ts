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
  starvePool,
  summary,
  troubleConfig,
} from './support/liveness.ts';

/**
 * Review 53: liveness after trouble, for child trees. Every pooled connection is held by the test
 * for three lease periods while a parent's children are mid-flight (fan-out), or while a cancelled
 * tree is unwinding; then the pool is given back. Within three lease periods (plus the machine's
 * slack) every run of the tree must be finished or say why it is not, and each step ran once.
 */
const POOL = 3;
const KIDS = 6;
const AFTER_RELEASE_MS = 3 * troubleConfig.worker.lease_seconds * 1000 + 8_000;
const starveFor = () => new Promise((r) => setTimeout(r, 3 * troubleConfig.worker.lease_seconds * 1000));

const kept = keptLogger();
const ran = new Map<string, number>();
let entered = 0;
let allIn = gate();
let release = gate();
const work = defineAction({
  name: 'r53-tree-work',
  run: async (i: number) => {
    ran.set(`work-${i}`, (ran.get(`work-${i}`) ?? 0) + 1);
    entered += 1;
    if (entered === KIDS) allIn.open();
    await release.opened;
    return i;
  },
});
const undo = defineAction({
  name: 'r53-tree-undo',
  run: async (i: number) => {
    ran.set(`undo-${i}`, (ran.get(`undo-${i}`) ?? 0) + 1);
    return i;
  },
});
const kid = defineFlow({
  name: 'r53-tree-kid',
  version: 1,
  run: async (ctx, i: number) => {
    try {
      return await ctx.action(work, i).compensateWith(undo, (o) => o);
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});
const parent = defineFlow({
  name: 'r53-tree-parent',
  version: 1,
  run: async (ctx, base: number) => Promise.all(Array.from({ length: KIDS }, (_, i) => ctx.child(kid, base + i))),
});

async function treeOf(db: Database, parentId: string): Promise<string[]> {
  const kids = await db.prisma.flowRun.findMany({ where: { parent_run_id: parentId }, select: { id: true } });
  return [parentId, ...kids.map((k) => k.id)];
}

describe('review 53: a child tree and a pool starved past the lease (real PostgreSQL)', () => {
  let db: Database;
  let engine: Engine;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: POOL });
    engine = createEngine({
      db,
      flows: [kid, parent],
      actions: [work, undo],
      config: { ...troubleConfig, worker: { ...troubleConfig.worker, concurrency: KIDS + 2 } },
      logger: pino({ level: 'warn' }, kept.stream),
    });
    engine.startWorkers();
    engine.startMonitor({ intervalMs: 200 });
  });
  afterAll(async () => {
    release.open();
    await engine?.stopWorkers(1000).catch(() => undefined);
    await engine?.stopMonitor().catch(() => undefined);
    await db?.close();
  });

  it('a parent whose children finish while the pool is starved past the lease completes, each child step run once', async () => {
    ran.clear();
    entered = 0;
    allIn = gate();
    release = gate();
    const { runId } = await engine.startFlow(parent, 100);
    await allIn.opened;
    const starved = await starvePool(db, POOL);
    release.open();
    await starveFor();
    starved.release();
    const releasedAt = Date.now();
    await waitFor(
      'the parent to finish',
      async () => (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).finished_at ?? undefined,
      AFTER_RELEASE_MS,
    ).catch(() => null);
    const tree = await treeOf(db, runId);
    const runs = await db.prisma.flowRun.findMany({
      where: { id: { in: tree } },
      select: { id: true, status: true, stuck_reason: true, waiting_for: true },
    });
    expect(
      { silent: await silentRuns(db, tree), statuses: runs.map((r) => r.status).sort() },
      `${Date.now() - releasedAt} ms after the pool came back; ${JSON.stringify(summary(kept.lines))}`,
    ).toMatchObject({ silent: [] });
    expect(runs.map((r) => r.status)).toEqual(runs.map(() => 'Completed'));
    expect(tree).toHaveLength(KIDS + 1);
    expect([...ran.values()].filter((n) => n !== 1)).toEqual([]);
    expect(await outcomesRecordedTwice(db, tree)).toEqual([]);
  }, 60_000);

  it('a tree cancelled while the pool is starved past the lease leaves no run open without a reason, each step and compensation run once', async () => {
    ran.clear();
    entered = 0;
    allIn = gate();
    release = gate();
    const { runId } = await engine.startFlow(parent, 200);
    await allIn.opened;
    // The cancellation is recorded; it is carried down the tree while the pool is starved.
    expect(await engine.cancel(runId, { reason: 'review 53', cleanupSeconds: 60 })).toEqual({ requested: true });
    const starved = await starvePool(db, POOL);
    release.open();
    await starveFor();
    starved.release();
    const releasedAt = Date.now();
    await waitFor(
      'the tree to finish',
      async () => {
        const tree = await treeOf(db, runId);
        const open = await db.prisma.flowRun.count({ where: { id: { in: tree }, finished_at: null } });
        return open === 0 ? true : undefined;
      },
      AFTER_RELEASE_MS,
    ).catch(() => null);
    const tree = await treeOf(db, runId);
    const runs = await db.prisma.flowRun.findMany({
      where: { id: { in: tree } },
      select: { id: true, status: true, stuck_reason: true, waiting_for: true },
    });
    expect(
      { silent: await silentRuns(db, tree), runs: runs.map((r) => [r.status, r.stuck_reason, r.waiting_for]) },
      `${Date.now() - releasedAt} ms after the pool came back; ${JSON.stringify(summary(kept.lines))}`,
    ).toMatchObject({ silent: [] });
    expect([...ran.values()].filter((n) => n !== 1)).toEqual([]);
    expect(await outcomesRecordedTwice(db, tree)).toEqual([]);
  }, 60_000);
});
