import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../src/index.ts';
import type { WorkerPoolCounters } from '../src/worker/pool-counters.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

const pollMs = 250;
const step = defineAction({ name: 'full-pool-step', run: async (n: number) => n + 1 });
const flow = defineFlow({ name: 'full-pool', version: 1, run: async (ctx, n: number) => ctx.action(step, n) });

/** Runs one flow at a time, each started as the last one finished, for `forMs` or `flows`: a closed loop at c = 1. */
async function closedLoop(
  t: Awaited<ReturnType<typeof openTestEngine>>,
  limit: { forMs: number } | { flows: number },
): Promise<number> {
  const finished = new Set<string>();
  let waiting: { runId: string; resolve: () => void } | null = null;
  const off = t.engine.events.on('run.finished', ({ runId }: { runId: string }) => {
    if (waiting?.runId === runId) waiting.resolve();
    else finished.add(runId);
  });
  const until = 'forMs' in limit ? performance.now() + limit.forMs : Infinity;
  const most = 'flows' in limit ? limit.flows : Infinity;
  let flows = 0;
  try {
    while (performance.now() < until && flows < most) {
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
      // A start is refused as stale once the loop has not read the job table for two poll intervals: at
      // 250 ms that is half a second of the loop not running, which a loaded machine does not cause.
      config: { worker: { concurrency: 1, poll_interval_ms: pollMs } },
    });
    t.engine.startWorkers();
  });
  afterAll(async () => {
    await t.engine.stopWorkers(2_000);
    await t.closeAll();
  });

  it('a closed loop of starts with nothing queued hands every start to the pool: none goes through the job table', async () => {
    // The LISTEN taking hold nudges the loop once, and a start that comes before the loop has read the
    // job table after that nudge is refused as queued. Wait for both by the counters, not by the clock:
    // a LISTEN slow to take hold on a loaded machine must not land inside the measured loop.
    const once = (holds: (c: WorkerPoolCounters) => boolean) => async () =>
      holds(t.engine.workerCounters()!) ? true : undefined;
    await waitFor(
      'the listener to take hold',
      once((c) => c.notifications.others >= 1),
    );
    // A read in flight when the nudge came does not answer it; the next one does. Nothing is queued,
    // so each read is an empty claim or a look, both counted once answered.
    const reads = (c: WorkerPoolCounters) => c.emptyClaims + c.looks;
    const heard = reads(t.engine.workerCounters()!);
    await waitFor(
      'the loop to read the job table twice since',
      once((c) => reads(c) >= heard + 2),
    );
    await closedLoop(t, { flows: 5 });
    const before = t.engine.workerCounters()!;
    // Twenty poll intervals with the only slot taken by the loop's own starts.
    const flows = await closedLoop(t, { forMs: 20 * pollMs });
    const d = delta(t.engine.workerCounters()!, before);
    expect(flows).toBeGreaterThan(20);
    expect(d).toMatchObject({ handOffs: flows, stale: 0, queued: 0, jobsClaimed: 0 });
    // The loop did look at the queue while the slot was taken (else the hand-offs went stale).
    expect(d.looks).toBeGreaterThan(0);
  });
});
