import type { openTestEngine } from '../../support/open-test-engine.ts';
import { switches, waiter } from './repair-fixtures.ts';

/** A waiter run parked on its `go` signal, with the workers stopped so only repairs move it. */
export async function waitingRun(t: Awaited<ReturnType<typeof openTestEngine>>): Promise<string> {
  switches.variant = 'a';
  const { runId } = await t.engine.startFlow(waiter, null);
  await t.drive(runId, { skipTime: false, until: (d) => d.run.waitingFor?.startsWith('signal') ?? false });
  await t.engine.stopWorkers();
  return runId;
}
