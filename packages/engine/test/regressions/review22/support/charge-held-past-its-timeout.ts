import type { Database } from '../../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../../src/index.ts';
import { executeRun, type ExecuteOutcome } from '../../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../../src/testing/test-clock.ts';
import { bareEngine, gate } from '../../harness.ts';

/**
 * Review 22. A run whose step 1 (a charge, compensated by a refund) is Running on a live replay when
 * the run's timeout passes, and a second replay that times the run out, stopped inside its rollback
 * plan: the flow's code, armed once the live replay passed it, waits on `planRelease`. The charge
 * returns when the test opens `release`. Driven by progress alone.
 */
export async function chargeHeldPastItsTimeout(db: Database, prefix: string) {
  const started = gate();
  const release = gate();
  const planReached = gate();
  const planRelease = gate();
  let armed = false;
  const charge = defineAction({
    name: `${prefix}-charge`,
    run: async () => {
      started.open();
      await release.promise;
      return 'charged';
    },
  });
  const refund = defineAction({ name: `${prefix}-refund`, run: async () => null });
  const flow = defineFlow({
    name: `${prefix}-flow`,
    version: 1,
    run: async (ctx) => {
      // Only the timing-out replay's plan waits here (armed after the live replay passed it).
      if (armed) {
        planReached.open();
        await planRelease.promise;
      }
      await ctx
        .action(charge, null)
        .compensateWith(refund, () => null)
        .run();
      return ctx.awaitSignal('never', { timeoutSeconds: 36000 });
    },
  });
  const clock = new TestClock();
  const e = bareEngine(db, { flows: [flow], actions: [charge, refund], clock });
  const { runId } = await e.startFlow(flow, null, { runTimeoutSeconds: 60 });
  const live: Promise<ExecuteOutcome> = executeRun(e.runtime, runId);
  await started.promise; // step 1 is Running on the live replay's worker
  clock.advance(120_000); // the run's timeout has passed
  armed = true;
  const timingOut: Promise<ExecuteOutcome> = executeRun(e.runtime, runId);
  await planReached.promise; // loaded; the plan has read the steps (step 1 Running) and replays the code
  return { charge, runId, live, timingOut, release, planRelease };
}
