import type { TestEngine } from '../../src/testing/create-test-engine.ts';
import { waiter } from '../repairs/support/repair-fixtures.ts';

/**
 * Starts one `waiter` run per deadline and drives each to its signal wait (an hour long), then stops
 * the workers: each run is an ordinary parked run whose business deadline the test's clock passes.
 */
export async function parkedWaiters(t: TestEngine, deadlinesSeconds: number[]): Promise<string[]> {
  const ids: string[] = [];
  for (const expiresInSeconds of deadlinesSeconds) {
    const { runId } = await t.engine.startFlow(waiter, null, { expiresInSeconds });
    await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    ids.push(runId);
  }
  await t.engine.stopWorkers();
  return ids;
}
