import type { TestEngine } from '../../../../src/testing/create-test-engine.ts';
import { waitFor } from '../../../support/wait-for.ts';

const open = ['Pending', 'Running', 'Waiting', 'Compensating'];

/**
 * Starts the pool and waits for run `runId` to end, reading only its own flow_runs row every 100 ms (the
 * kit's drive() reads the whole run detail every 10 ms, which on a long run is most of the work).
 */
export async function untilEnded(t: Pick<TestEngine, 'engine' | 'db'>, runId: string, timeoutMs: number) {
  t.engine.startWorkers();
  let last = 'not read yet';
  return waitFor(
    () => `run ${runId} to end (it is ${last})`,
    async () => {
      await new Promise((r) => setTimeout(r, 100));
      const run = await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      last = `${run.status}, ${run.stuck_reason ?? run.waiting_for ?? 'no reason'}`;
      return open.includes(run.status) ? undefined : run;
    },
    timeoutMs,
  );
}
