import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { defineAction, defineFlow, type Json } from '../src/index.ts';
import { createTestEngine, type TestEngine } from '../src/testing/create-test-engine.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';

const step = defineAction({ name: 'under-load-step', run: async (input: Json) => input });
const flow = defineFlow({
  name: 'under-load',
  version: 1,
  run: async (ctx, input: Json) => {
    await ctx.action(step, input);
    await ctx.action(step, input);
    return ctx.action(step, input);
  },
});

/**
 * An engine kept busy without a pause (a closed loop of starts in its own process, as the bench and
 * an in-process producer drive it) must still let the process's timers run: the pool's heartbeat, the
 * monitor, the maintenance loop and the host's own are timers. On PGlite nothing of a statement is
 * I/O, so a chain of statements that never yields to the event loop would hold every timer off for
 * as long as the work lasts (ADR 0050's finding; found with a 100 ms interval that ticked 0 times in
 * 15 s). Driven by progress: the loop stops once a 5 ms interval has ticked 3 times, or after 1,500
 * flows, when it fails.
 */
describe(`timers run while the engine is busy without a pause (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  beforeAll(async () => {
    db = await openTestDatabase();
    t = await createTestEngine({ db, flows: [flow], actions: [step], config: { worker: { concurrency: 8 } } });
    t.engine.startWorkers();
  });
  afterAll(async () => {
    await t.close();
    await db.close();
  });

  it('a 5 ms interval ticks while 8 closed loops start and wait for runs', async () => {
    let ticks = 0;
    const interval = setInterval(() => (ticks += 1), 5);
    let flows = 0;
    const waiting = new Map<string, () => void>();
    // A run can finish before its start has handed its id back.
    const early = new Set<string>();
    const off = t.engine.events.on('run.finished', ({ runId }) => {
      const resolve = waiting.get(runId);
      if (resolve) resolve();
      else early.add(runId);
    });
    const loop = async () => {
      while (ticks < 3 && flows < 1_500) {
        const done = new Promise<void>((resolve) => {
          void t.engine
            .startFlow(flow, { n: flows })
            .then(({ runId }) => (early.delete(runId) ? resolve() : void waiting.set(runId, resolve)));
        });
        await done;
        flows += 1;
      }
    };
    try {
      await Promise.all(Array.from({ length: 8 }, loop));
    } finally {
      clearInterval(interval);
      off();
    }
    expect({ ticks: Math.min(ticks, 3), flowsBeforeThreeTicks: flows < 1_500 }).toEqual({
      ticks: 3,
      flowsBeforeThreeTicks: true,
    });
  });
});
