import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { createTestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * Fix 50 (ADR 0124): a grandchild no worker can run (`unknown_flow`) holds its parent and its
 * grandparent. The monitor makes the chain visible, one level per pass: the child says its child is
 * stuck, and the root says its child is stuck, quoting the child's reason, so the root cause is read
 * from the run on-call finds first. Once a worker that has the grandchild's flow claims it (it is
 * running, not stuck), the monitor clears both reasons (`run.unstuck` by the monitor), and the tree
 * completes.
 */
let release: (() => void) | null = null;
let entered: (() => void) | null = null;
const gate = defineAction({
  name: 'f50-gated',
  run: async () => {
    entered?.();
    await new Promise<void>((r) => (release = r));
    return { ok: true };
  },
});
const grandchild = defineFlow({
  name: 'f50-grandchild',
  version: 1,
  run: async (ctx) => {
    await ctx.action(gate, null).run();
    return 'gc';
  },
});
const child = defineFlow({
  name: 'f50-child',
  version: 1,
  run: async (ctx) => ctx.child(grandchild, null),
});
const root = defineFlow({
  name: 'f50-root',
  version: 1,
  run: async (ctx) => ctx.child(child, null),
});

describe(`fix 50: a chain of runs waiting on a stuck run is visible and cleared by the monitor (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  let second: Awaited<ReturnType<typeof createTestEngine>> | null = null;
  beforeAll(async () => {
    // The grandchild's flow is on no worker of this engine.
    t = await openTestEngine({ flows: [root, child], actions: [] });
  });
  afterAll(async () => {
    release?.();
    await second?.close();
    await t?.closeAll();
  });

  it('the root and the child name the stuck grandchild, then both are cleared once it runs', async () => {
    const { runId } = await t.engine.startFlow(root, null);
    t.engine.startWorkers();
    t.engine.startMonitor({ intervalMs: 100 });
    const reasonOf = async (id: string) =>
      (await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id } })).stuck_reason;

    const gc = await waitFor(
      'the grandchild to be stuck unknown_flow',
      async () => {
        const c = await t.db.prisma.flowRun.findFirst({ where: { flow_name: 'f50-grandchild' } });
        return c?.stuck_reason?.startsWith('unknown_flow') ? c : undefined;
      },
      20_000,
    );
    const mid = await t.db.prisma.flowRun.findFirstOrThrow({ where: { flow_name: 'f50-child' } });
    const childReason = `child_stuck: child run ${gc.id} is stuck (${gc.stuck_reason})`;
    await waitFor(
      'the child to name the stuck grandchild',
      async () => (await reasonOf(mid.id)) === childReason || undefined,
      20_000,
    );
    await waitFor(
      'the root to name the stuck child, quoting its reason',
      async () => (await reasonOf(runId)) === `child_stuck: child run ${mid.id} is stuck (${childReason})` || undefined,
      20_000,
    );
    const stuckList = await t.db.prisma.flowRun.findMany({
      where: { stuck_reason: { not: null } },
      select: { id: true },
      orderBy: { created_at: 'asc' },
    });
    expect(new Set(stuckList.map((r) => r.id))).toEqual(new Set([runId, mid.id, gc.id]));

    // A worker that has the grandchild's flow takes its handed-back wake (due later: the clock moves on).
    const inStep = new Promise<void>((r) => (entered = r));
    second = await createTestEngine({ db: t.db, clock: t.clock, flows: [grandchild], actions: [gate] });
    second.engine.startWorkers();
    let running = false;
    void inStep.then(() => (running = true));
    await waitFor(
      'the grandchild to run on the second worker',
      async () => {
        if (!running) t.clock.advance(61_000);
        return running || undefined;
      },
      20_000,
    );
    expect(await reasonOf(gc.id)).toBeNull();
    await waitFor(
      'the monitor to clear the child and the root',
      async () => ((await reasonOf(mid.id)) === null && (await reasonOf(runId)) === null) || undefined,
      20_000,
    );
    for (const id of [runId, mid.id]) {
      const events = await t.db.prisma.flowEvent.findMany({
        where: { run_id: id, type: { in: ['run.stuck', 'run.unstuck'] } },
        orderBy: { id: 'asc' },
      });
      expect(events.map((e) => [e.type, (e.data as { by?: string }).by ?? null])).toEqual([
        ['run.stuck', null],
        ['run.unstuck', 'monitor'],
      ]);
    }

    release?.();
    // A wake of the child or the root that the second worker (without their flows) takes is handed back
    // for later (ADR 0112): the clock moves on until the first worker has run them.
    const done = await waitFor(
      'the tree to complete',
      async () => {
        const d = await t.engine.getRun(runId);
        if (d?.run.status === 'Completed') return d;
        t.clock.advance(61_000);
        return undefined;
      },
      30_000,
    );
    expect(done.run.output).toBe('gc');
    await second.engine.stopWorkers(2000);
  }, 90_000);
});
