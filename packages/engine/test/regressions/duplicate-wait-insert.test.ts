import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { defineFlow } from '../../src/index.ts';
import { executeRun } from '../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { bareEngine, gate } from './harness.ts';

/**
 * wait-step.ts:43-64 does not look at `created.inserted`: when a duplicate replay's insert of the
 * same wait meets the other replay's row, it still creates the timer row (unique violation: the
 * replay aborts as an engine fault and its job is redelivered after the lease), and for a signal
 * wait it appends a second `signal.waiting` event and a second wake job.
 */
const gates = [gate(), gate()];
let n = 0;
const started: number[] = [];
const sleeper = defineFlow({
  name: 'dup-sleeper',
  version: 1,
  run: async (ctx) => {
    const mine = n++;
    started.push(mine);
    await gates[mine]!.promise;
    await ctx.sleep(60);
    return null;
  },
});

describe(`regression (review): two replays scheduling the same wait (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    for (const g of gates) g.open();
    await db.close();
  });

  it("the second replay reuses the first one's timer and parks quietly", async () => {
    const e = bareEngine(db, { flows: [sleeper], actions: [] });
    const { runId } = await e.startFlow(sleeper, null);
    const p0 = executeRun(e.runtime, runId).catch(
      (err: unknown) =>
        `threw: ${(err as { code?: string }).code ?? ''} ${/Unique constraint[^\n]*/.exec((err as Error).message)?.[0] ?? (err as Error).message.trim().split('\n')[0]}`,
    );
    const p1 = executeRun(e.runtime, runId).catch(
      (err: unknown) =>
        `threw: ${(err as { code?: string }).code ?? ''} ${/Unique constraint[^\n]*/.exec((err as Error).message)?.[0] ?? (err as Error).message.trim().split('\n')[0]}`,
    );
    while (started.length < 2) await new Promise((r) => setTimeout(r, 5));
    gates[0]!.open();
    // Either replay may be the one the first gate holds: take whichever finishes first.
    const first = await Promise.race([p0, p1]);
    gates[1]!.open();
    const both = await Promise.all([p0, p1]);
    const second = both[0] === first ? both[1] : both[0];
    const started_ = await db.prisma.flowEvent.count({ where: { run_id: runId, type: 'timer.started' } });
    expect({ first, second, timerStartedEvents: started_ }).toEqual({
      first: 'parked',
      second: 'parked',
      timerStartedEvents: 1,
    });
  });
});
