import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Database, type Engine } from '../../../src/index.ts';
import { spawnWorker } from '../../support/spawn-worker.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { fusedSigkillConfig } from '../fused-steps/support/fused-sigkill-flow.ts';
import { burstKillFlow } from '../review13/support/burst-kill-flow.ts';

const workerScript = fileURLToPath(new URL('./support/round-kill-worker.ts', import.meta.url));
/** Progress-driven waits: each fails only when its condition has not come in this long (a loaded 2-core machine). */
const WAIT_MS = 60_000;

/**
 * Review 14 (ADR 0070): a worker process SIGKILLed while one of its rounds (ADR 0066) is out, after
 * several have gone. A round is one transaction: either all of it committed before the kill or none
 * of it did. Whatever did must be finished here exactly once per step; every run must end, none left
 * open or stuck, no start written twice.
 */
describe('a worker SIGKILLed with a round out (real PostgreSQL, real process)', () => {
  let db: Database & { url?: string };
  let child: ChildProcess | null = null;
  let engine: Engine | null = null;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await engine?.stopWorkers(2000);
    await db.close();
  });

  it('every run ends here with one outcome per step and one finish', async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project (a database URL for the child)');
    const { proc } = await spawnWorker(workerScript, db.url, (p) => (child = p));
    let out = 0;
    let back = 0;
    let lines = '';
    proc.stdout?.on('data', (chunk: Buffer) => {
      lines += chunk.toString();
      const all = lines.split('\n');
      lines = all.pop()!;
      for (const line of all)
        if (line === 'round out') out++;
        else if (line === 'round back') back++;
    });
    // Several rounds gone and back, and one out now: the kill lands on a round in flight.
    await waitFor('rounds to go, and one to be out', async () => (back >= 5 && out > back ? true : undefined), WAIT_MS);
    const exited = new Promise<NodeJS.Signals | null>((r) => proc.once('exit', (_code, signal) => r(signal)));
    proc.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    child = null;

    const { flow, actions } = burstKillFlow(async (n) => n);
    engine = createEngine({
      db,
      flows: [flow],
      actions,
      config: fusedSigkillConfig,
      logger: pino({ level: 'silent' }),
    });
    engine.startWorkers();
    const open = () => db.prisma.flowRun.count({ where: { status: { in: ['Pending', 'Running', 'Waiting'] } } });
    await waitFor('every run to end', async () => ((await open()) === 0 ? true : undefined), WAIT_MS);
    await engine.stopWorkers(2000);

    const runs = await db.prisma.flowRun.findMany({ include: { actions: true, events: true } });
    expect(runs.length).toBeGreaterThan(0);
    const wrong = runs.flatMap((run) => {
      const n = run.input as number;
      const completedEvents = run.events.filter((e) => e.type === 'action.completed');
      const fine =
        run.status === 'Completed' &&
        run.stuck_reason === null &&
        JSON.stringify(run.output) === JSON.stringify([n, n * 10]) &&
        run.actions.length === 2 &&
        run.actions.every(
          (s) => s.status === 'Completed' && completedEvents.filter((e) => e.row_id === s.id).length === 1,
        ) &&
        run.events.filter((e) => e.type === 'run.completed').length === 1;
      return fine ? [] : [`${n}: ${run.status} ${run.events.map((e) => e.type).join(',')}`];
    });
    expect(wrong).toEqual([]);
    // Not vacuous: steps the dead worker held were taken back and run again here.
    expect(runs.some((run) => run.actions.some((s) => s.attempts >= 2))).toBe(true);
    expect(await db.prisma.job.count()).toBe(0);
    const inputs = runs.map((r) => r.input as number);
    expect(new Set(inputs).size).toBe(inputs.length);
  }, 180_000);
});
