import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/index.ts';
import { childWorkerSuite } from '../../support/spawn-worker.ts';
import { waitFor } from '../../support/wait-for.ts';
import { outcomesRecordedTwice, silentRuns } from './support/liveness.ts';
import { frozenRollbackConfig, frozenRollbackFlow } from './support/frozen-rollback-flow.ts';

const workerScript = fileURLToPath(new URL('./support/frozen-rollback-worker.ts', import.meta.url));
const WAIT_MS = 25_000;

/**
 * Review 53: the worker rolling a saga back is frozen (SIGSTOP) in the middle of a compensation, past
 * `worker.dead_after_seconds`. While frozen, the run must say why it does not move (owner_gone, naming
 * the compensation); once the worker runs again and its compensation finishes, the run must end
 * Compensated, the reason gone, each compensation recorded once.
 */
describe('review 53: a rollback whose worker is frozen mid-compensation (real PostgreSQL, real process)', () => {
  const suite = childWorkerSuite();

  it('a rollback frozen past dead_after says why while frozen, and ends Compensated once its worker resumes', async () => {
    const { db } = suite;
    const child = await suite.spawn(workerScript);
    const { flow, actions } = frozenRollbackFlow(async (i) => i);
    const engine = suite.adopt(
      createEngine({ db, flows: [flow], actions, config: frozenRollbackConfig, logger: pino({ level: 'silent' }) }),
    );
    const { runId } = await engine.startFlow(flow, null);
    await child.printed(/undoing 2/, WAIT_MS);
    child.proc.kill('SIGSTOP');
    engine.startMonitor({ intervalMs: 100 });
    let whileFrozen: string | null;
    try {
      whileFrozen = await waitFor(
        'the run to say why while its worker is frozen',
        async () => (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).stuck_reason ?? undefined,
        5 * frozenRollbackConfig.worker.dead_after_seconds * 1000,
      ).catch(() => null);
    } finally {
      child.proc.kill('SIGCONT');
    }
    expect(whileFrozen).toMatch(/owner_gone/);
    child.say();
    await waitFor(
      'the saga to end',
      async () => (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).finished_at ?? undefined,
      WAIT_MS,
    ).catch(() => null);
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const comps = await db.prisma.compensationRun.findMany({
      where: { run_id: runId },
      select: { name: true, status: true, attempts: true },
    });
    expect({
      silent: await silentRuns(db, [runId]),
      status: run.status,
      stuckReason: run.stuck_reason,
      comps,
    }).toMatchObject({
      stuckReason: null,
      silent: [],
      status: 'Compensated',
    });
    expect(comps.map((c) => [c.status, c.attempts])).toEqual(comps.map(() => ['Completed', 1]));
    expect(await outcomesRecordedTwice(db, [runId])).toEqual([]);
    await engine.stopMonitor();
  }, 60_000);
});
