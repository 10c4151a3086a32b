import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate, sleep } from '../harness.ts';

const entered = gate();
const release = gate();
const held = defineAction({
  name: 'review12-held',
  run: async (_: null) => {
    entered.open();
    await release.promise;
    return 1;
  },
});
const flow = defineFlow({ name: 'review12-held', version: 1, run: async (ctx) => ctx.action(held, null) });

/**
 * ADR 0060's counters reviewed (ADR 0061): `looks` counts the reads of the queue a full pool made,
 * and `looksFindingWork` those that found a due job, so `looks - looksFindingWork` is the reads that
 * let starts keep skipping the queue. A read that failed (the job table out of reach) read nothing:
 * it is not a look. Here the only slot is held by a running action while the job table is renamed
 * away, so every look the pool owes fails.
 */
describe('a look at the queue that fails is not counted as a look (postgres)', () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [flow],
      actions: [held],
      config: { worker: { concurrency: 1, poll_interval_ms: 50 } },
    });
    t.engine.startWorkers();
  });
  afterAll(async () => {
    release.open();
    await t.engine.stopWorkers(2_000);
    await t.closeAll();
  });

  it('while the job table is out of reach the full pool looks and fails, and its looks stay as they were', async () => {
    const { runId } = await t.engine.startFlow(flow, null);
    await entered.promise;
    // The pool is full and owes a look every poll interval: it reads the queue.
    await waitFor('a look', async () => (t.engine.workerCounters()!.looks > 0 ? true : undefined));
    await t.db.driver.exec('alter table "sagaflow"."jobs" rename to "jobs_away"');
    try {
      await sleep(150);
      const before = t.engine.workerCounters()!.looks;
      // Ten poll intervals, each owing a look that fails.
      await sleep(500);
      expect(t.engine.workerCounters()!.looks).toBe(before);
    } finally {
      await t.db.driver.exec('alter table "sagaflow"."jobs_away" rename to "jobs"');
    }
    // Back in reach: the looks count again, and the run finishes.
    const back = t.engine.workerCounters()!.looks;
    await waitFor('a look once the table is back', async () =>
      t.engine.workerCounters()!.looks > back ? true : undefined,
    );
    release.open();
    await waitFor('the run to finish', async () =>
      (await t.engine.getRun(runId))?.run.status === 'Completed' ? true : undefined,
    );
  });
});
