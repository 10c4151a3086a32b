import { setTimeout as sleep } from 'node:timers/promises';
import { isNoConnectionInTime } from '../../../../src/runtime/in-run-transaction.ts';
import type { TestEngine } from '../../../../src/testing/create-test-engine.ts';

const open = ['Pending', 'Running', 'Waiting', 'Compensating'];

/**
 * One of the test's own reads, sent again while the pool it shares with the engine's workers gave it
 * no connection in time. On a loaded machine a pool of ten kept busy by eight workers can keep a read
 * waiting past pg-pool's connect timeout; the engine's own transactions wait again (ADR 0097), and the
 * test's reads are not what these tests attack.
 */
export async function readUnderLoad<T>(read: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await read();
    } catch (err) {
      if (!isNoConnectionInTime(err)) throw err;
    }
  }
}

/**
 * Starts the pool and waits for run `runId` to end, reading only its own rows every 100 ms (the kit's
 * drive() reads the whole run detail every 10 ms, which on a long run is most of the work).
 *
 * It fails when the run made no progress for `stalledMs`: its status, its row, and how many of its
 * steps, compensations and child runs have ended all stayed as they were. A long run that moves slowly
 * on a loaded machine is waited for; a run that stopped moving fails, saying where it stands.
 */
export async function untilEnded(t: Pick<TestEngine, 'engine' | 'db'>, runId: string, stalledMs: number) {
  t.engine.startWorkers();
  let progress = '';
  let movedAt = Date.now();
  for (;;) {
    await sleep(100);
    const run = await readUnderLoad(() => t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } }));
    if (!open.includes(run.status)) return run;
    const [steps, compensations, children] = await readUnderLoad(() =>
      Promise.all([
        t.db.prisma.actionRun.count({ where: { run_id: runId, status: { notIn: ['Pending', 'Running'] } } }),
        t.db.prisma.compensationRun.count({ where: { run_id: runId, status: 'Completed' } }),
        t.db.prisma.flowRun.count({ where: { parent_run_id: runId, status: { notIn: open } } }),
      ]),
    );
    const now = `${run.status}, ${run.stuck_reason ?? run.waiting_for ?? 'no reason'}, updated ${run.updated_at.toISOString()}; ${steps} steps, ${compensations} compensations and ${children} child runs ended`;
    if (now !== progress) {
      progress = now;
      movedAt = Date.now();
    } else if (Date.now() - movedAt > stalledMs) {
      throw new Error(`run ${runId} made no progress for ${stalledMs} ms: it is ${progress}`);
    }
  }
}
