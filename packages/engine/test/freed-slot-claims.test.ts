import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, defineAction, defineFlow, type Engine } from '../src/index.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

const ran: number[] = [];
const step = defineAction({ name: 'freed-slot-step', run: async (n: number) => (ran.push(n), n) });
const flow = defineFlow({ name: 'freed-slot', version: 1, run: async (ctx, n: number) => ctx.action(step, n) });

/**
 * A listening pool whose last claim came back short is told of every job queued due now, so a slot
 * that frees is no reason to claim (ADR 0038, addendum of 2026-12-01, decision 9): runs that end with
 * nothing started behind them (the end of a burst, of a closed loop) cost no claim each, and a job
 * another engine queues afterwards still runs at once, woken by its NOTIFY (the poll is a minute away).
 */
describe(`a listening pool does not claim for a freed slot it was told nothing about (${testDbKind()})`, () => {
  let db: Awaited<ReturnType<typeof openTestDatabase>>;
  let engine: Engine;
  let starter: Engine;
  beforeAll(async () => {
    db = await openTestDatabase();
    const logger = pino({ level: 'silent' });
    engine = createEngine({
      db,
      flows: [flow],
      actions: [step],
      logger,
      config: { worker: { concurrency: 4, poll_interval_ms: 60_000 } },
    });
    starter = createEngine({ db, flows: [flow], actions: [step], logger });
  });
  afterAll(async () => {
    await engine.stopWorkers();
    await db.close();
  });

  const completed = (runIds: string[]) => async () => {
    for (const runId of runIds) if ((await engine.getRun(runId))?.run.status !== 'Completed') return undefined;
    return true;
  };

  it('four runs that end with no start behind them make no claim; a run queued elsewhere then runs at once', async () => {
    const counters = () => engine.workerCounters()!;
    engine.startWorkers();
    await waitFor('the LISTEN to take hold', async () => (counters().notifications.others > 0 ? true : undefined));
    // One run to get past the start-up (the claim the LISTEN's nudge asks for), as the other tests do.
    const warmUp = (await engine.startFlow(flow, 0)).runId;
    await waitFor('the warm-up run', completed([warmUp]));
    const base = counters();

    const burst: string[] = [];
    for (const n of [1, 2, 3, 4]) burst.push((await engine.startFlow(flow, n)).runId);
    await waitFor('the burst to complete', completed(burst));
    const afterBurst = counters();
    expect(afterBurst.handOffs - base.handOffs).toBe(4);
    // Had the pool claimed for each freed slot, this would be 4 (the counter grows before the claim is sent).
    expect(afterBurst.claims - base.claims).toBe(0);

    const { runId } = await starter.startFlow(flow, 5);
    await waitFor('the run another engine queued', completed([runId]));
    const c = counters();
    expect(c.notifications.others - afterBurst.notifications.others).toBe(1);
    expect(c.jobsClaimed - afterBurst.jobsClaimed).toBe(1);
    expect(ran.slice(-5).sort()).toEqual([1, 2, 3, 4, 5]);
  });
});
