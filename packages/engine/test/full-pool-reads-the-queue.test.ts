import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../src/index.ts';
import type { WorkerPoolCounters } from '../src/worker/pool-counters.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';

const step = defineAction({ name: 'full-pool-step', run: async (n: number) => n + 1 });
const flow = defineFlow({ name: 'full-pool', version: 1, run: async (ctx, n: number) => ctx.action(step, n) });

/** Runs one flow at a time, each started as the last one finished, for `forMs`: a closed loop at c = 1. */
async function closedLoop(t: Awaited<ReturnType<typeof openTestEngine>>, forMs: number): Promise<number> {
  const finished = new Set<string>();
  let waiting: { runId: string; resolve: () => void } | null = null;
  const off = t.engine.events.on('run.finished', ({ runId }: { runId: string }) => {
    if (waiting?.runId === runId) waiting.resolve();
    else finished.add(runId);
  });
  const until = performance.now() + forMs;
  let flows = 0;
  try {
    while (performance.now() < until) {
      const { runId } = await t.engine.startFlow(flow, flows);
      if (!finished.delete(runId)) await new Promise<void>((resolve) => (waiting = { runId, resolve }));
      flows += 1;
    }
  } finally {
    off();
  }
  return flows;
}

const delta = (after: WorkerPoolCounters, before: WorkerPoolCounters) => ({
  handOffs: after.handOffs - before.handOffs,
  stale: after.handOffsRefused.stale - before.handOffsRefused.stale,
  queued: after.handOffsRefused.queued - before.handOffsRefused.queued,
  jobsClaimed: after.jobsClaimed - before.jobsClaimed,
  looks: after.looks - before.looks,
});

/**
 * A pool that every start keeps full never has a free slot when its claim is owed. It reads the
 * queue instead (ADR 0060): while nothing is due, starts keep skipping the queue; the run a start
 * would have sent through it cost three more writing transactions for nothing.
 */
describe(`a full pool reads the queue instead of refusing a start (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [flow],
      actions: [step],
      config: { worker: { concurrency: 1, poll_interval_ms: 100 } },
    });
    t.engine.startWorkers();
  });
  afterAll(async () => {
    await t.engine.stopWorkers(2_000);
    await t.closeAll();
  });

  it('a closed loop of starts with nothing queued hands every start to the pool: none goes through the job table', async () => {
    // The LISTEN taking hold wakes the loop once, and a start that comes meanwhile is queued: warm up past it.
    await closedLoop(t, 300);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const before = t.engine.workerCounters()!;
    // Dozens of poll intervals with the only slot taken by the loop's own starts.
    const flows = await closedLoop(t, 3_000);
    const d = delta(t.engine.workerCounters()!, before);
    expect(flows).toBeGreaterThan(20);
    expect(d).toMatchObject({ handOffs: flows, stale: 0, queued: 0, jobsClaimed: 0 });
    // The loop did look at the queue while the slot was taken (else the hand-offs went stale).
    expect(d.looks).toBeGreaterThan(0);
  });
});
