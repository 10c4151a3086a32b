import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import type { WorkerPoolCounters } from '../../../src/worker/pool-counters.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

const step = defineAction({ name: 'review12-loop-step', run: async (n: number) => n + 1 });
const loopFlow = defineFlow({ name: 'review12-loop', version: 1, run: async (ctx, n: number) => ctx.action(step, n) });
const sleeper = defineFlow({
  name: 'review12-sleeper',
  version: 1,
  run: async (ctx, n: number) => {
    await ctx.sleep(120);
    return ctx.action(step, n);
  },
});
const orphan = defineFlow({ name: 'review12-orphan', version: 1, run: async (ctx, n: number) => ctx.action(step, n) });

type Opened = Awaited<ReturnType<typeof openTestEngine>>;

/** Starts one flow at a time, each as the last one finished, until `stop()`: a closed loop at c = 1. */
function closedLoop(t: Opened) {
  let running = true;
  let flows = 0;
  const finished = new Set<string>();
  let waiting: { runId: string; resolve: () => void } | null = null;
  const off = t.engine.events.on('run.finished', ({ runId }: { runId: string }) => {
    if (waiting?.runId === runId) waiting.resolve();
    else finished.add(runId);
  });
  const done = (async () => {
    try {
      while (running) {
        const { runId } = await t.engine.startFlow(loopFlow, flows);
        if (!finished.delete(runId)) await new Promise<void>((resolve) => (waiting = { runId, resolve }));
        flows += 1;
      }
    } finally {
      off();
    }
  })();
  return {
    flows: () => flows,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

const statusOf = async (t: Opened, runId: string) => (await t.engine.getRun(runId))?.run.status;

/**
 * ADR 0060 reviewed (ADR 0061): a pool kept full by a closed loop of starts handed to it reads the
 * queue instead of claiming, and a read that finds nothing due lets the hand-offs go on. Jobs that
 * come due by time announce nothing: a timer's wake, and a wake leased by a worker that died, once
 * its lease runs out (seed 000's redelivery, the way a killed worker's run is recovered). The look
 * must find them, so the pool claims them at its next free slot while the loop keeps running: a
 * bounded delay, not starvation until the loop stops.
 */
describe(`a full pool still runs the work that comes due while starts keep it full (${testDbKind()})`, () => {
  let t: Opened;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [loopFlow, sleeper, orphan],
      actions: [step],
      config: { worker: { concurrency: 1, poll_interval_ms: 200 } },
    });
  });
  afterAll(async () => {
    await t.engine.stopWorkers(2_000);
    await t.closeAll();
  });

  it("a timer's wake and a dead worker's expired lease are run while the loop goes on, found by the pool's looks", async () => {
    // Queued before any pool runs: the orphan's wake, then leased for 30 s to a worker that is gone.
    const { runId: orphanId } = await t.engine.startFlow(orphan, 1);
    const leased = await t.db.prisma.job.updateMany({
      where: { run_id: orphanId },
      data: {
        locked_by: 'review12-dead-worker',
        locked_until: new Date(t.clock.now().getTime() + 30_000),
        deliveries: 1,
      },
    });
    expect(leased.count).toBe(1);
    t.engine.startWorkers();
    const { runId: sleeperId } = await t.engine.startFlow(sleeper, 2);
    await waitFor('the sleeper to wait on its timer', async () =>
      (await statusOf(t, sleeperId)) === 'Waiting' ? true : undefined,
    );

    const loop = closedLoop(t);
    try {
      // Past the LISTEN taking hold and into the closed loop: the only slot is the loop's now.
      await waitFor('the loop to run', async () => (loop.flows() >= 10 ? true : undefined));
      expect(await statusOf(t, orphanId)).toBe('Pending');
      // One at a time, by the clock alone (nothing notifies the pool of either): first the dead
      // worker's lease runs out, then the timer comes due.
      for (const [what, runId, advanceMs] of [
        ['the expired lease', orphanId, 31_000],
        ["the timer's wake", sleeperId, 100_000],
      ] as const) {
        const before = t.engine.workerCounters()!;
        t.clock.advance(advanceMs);
        const atDue = loop.flows();
        await waitFor(
          `${what} to be run while the loop goes on`,
          async () => ((await statusOf(t, runId)) === 'Completed' ? true : undefined),
          30_000,
        );
        const after = t.engine.workerCounters()!;
        const d = (pick: (c: WorkerPoolCounters) => number) => pick(after) - pick(before);
        // The loop went on meanwhile: the pool was kept full, yet claimed it.
        expect(loop.flows(), what).toBeGreaterThan(atDue);
        expect(
          d((c) => c.jobsClaimed),
          what,
        ).toBeGreaterThanOrEqual(1);
        // Found by the looks, a few poll intervals at most: the first look after it came due sees
        // it, and the next free slot claims it. A look that missed it would leave it to a slot that
        // happens to be free when a claim is owed (about one poll in a hundred here).
        expect(
          d((c) => c.looks),
          what,
        ).toBeLessThan(20);
      }
    } finally {
      await loop.stop();
    }
    const runs = await t.db.prisma.actionRun.findMany({ where: { run_id: orphanId } });
    expect(runs.map((r) => [r.status, r.attempts])).toEqual([['Completed', 1]]);
  });
});
