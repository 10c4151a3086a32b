import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { bareEngine } from '../harness.ts';

/**
 * `count` runs of a flow (named `${name}`) that ran one step and parked waiting for the signal `go`,
 * each replayed once by this test's engine: the open runs review 18's run repairs are applied to.
 */
export async function runsParkedOnASignal(
  db: Database,
  name: string,
  count: number,
): Promise<{ e: Engine; ids: string[] }> {
  const step = defineAction({ name: `${name}-step`, run: async () => 'step' });
  const flow = defineFlow({
    name,
    version: 1,
    run: async (ctx) => {
      await ctx.action(step, null).run();
      return ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    },
  });
  const e = bareEngine(db, { flows: [flow], actions: [step] });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const { runId } = await e.startFlow(flow, null);
    if ((await executeRun(e.runtime, runId)) !== 'parked') throw new Error(`run ${runId} did not park on its signal`);
    ids.push(runId);
  }
  return { e, ids };
}
