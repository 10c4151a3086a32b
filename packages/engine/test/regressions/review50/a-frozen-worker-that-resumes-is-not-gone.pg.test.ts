import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/index.ts';
import { childWorkerSuite } from '../../support/spawn-worker.ts';
import { waitFor } from '../../support/wait-for.ts';
import { frozenConfig, frozenFlow } from './support/frozen-flow.ts';

const workerScript = fileURLToPath(new URL('./support/frozen-worker.ts', import.meta.url));
/** Progress-driven waits: each fails only when its condition has not come in this long (a loaded 2-core machine). */
const WAIT_MS = 25_000;

/**
 * Review 50: a worker that was only frozen (SIGSTOP: a GC pause, a suspended VM, a stalled host) past
 * `worker.dead_after_seconds` is marked `owner_gone` by the monitor, rightly. Once it runs again
 * (SIGCONT) and beats, its step is being worked on by a live worker: the reason is no longer true,
 * the repairs it offers (reclaim, kick) are refused as "not held by a gone worker", and the run is not
 * stuck. The stuck list must stop showing it within a few monitor passes, as a Temporal or DBOS
 * console shows a live activity as running, not as abandoned.
 */
describe('review 50: a frozen worker that resumes is no longer shown as gone (real PostgreSQL, real process)', () => {
  const suite = childWorkerSuite();

  it('a run marked owner_gone while its worker was frozen is not stuck once that worker beats again', async () => {
    const { db } = suite;
    const child = await suite.spawn(workerScript);
    const { flow, actions } = frozenFlow(async () => ({ by: 'test-process' }));
    // This process has no pool: the child takes the run's wake and holds its charge step.
    const engine = suite.adopt(
      createEngine({ db, flows: [flow], actions, config: frozenConfig, logger: pino({ level: 'silent' }) }),
    );
    const { runId } = await engine.startFlow(flow, null);
    await waitFor(
      'the child to hold the charge step',
      async () => {
        const s = await db.prisma.actionRun.findFirst({ where: { run_id: runId, name: 'r50-frozen-charge' } });
        return s?.status === 'Running' && s.claimed_by === child.workerId ? s : undefined;
      },
      WAIT_MS,
    );

    child.proc.kill('SIGSTOP');
    engine.startMonitor({ intervalMs: 100 });
    let markedAt: Date;
    try {
      const reason = await waitFor(
        'the monitor to say the charge step is held by a gone worker',
        async () => {
          const r = (await engine.getRun(runId))?.run.stuckReason;
          return r?.startsWith('owner_gone') ? r : undefined;
        },
        WAIT_MS,
      );
      expect(reason).toContain(child.workerId);
      markedAt = (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).updated_at;
    } finally {
      child.proc.kill('SIGCONT');
    }

    // The worker is alive again: its heartbeat is newer than the mark, and it still holds the step.
    await waitFor(
      'the resumed worker to beat again',
      async () => {
        const w = await db.prisma.worker.findUniqueOrThrow({ where: { id: child.workerId } });
        return w.stopped_at === null && w.heartbeat_at.getTime() > markedAt.getTime() + 500 ? w : undefined;
      },
      WAIT_MS,
    );
    const step = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, name: 'r50-frozen-charge' } });
    expect([step.status, step.claimed_by]).toEqual(['Running', child.workerId]);
    // The engine itself now says the owner is not gone: the repair the reason offers is refused.
    const reclaim = await engine.reclaimStep(runId, { stepId: step.id });
    expect(reclaim.reclaimed).toBe(false);

    // Give the monitor many passes (it sweeps every 100 ms) after the worker's return, measured by its
    // heartbeats (each 100 ms): 30 more beats.
    const resumedBeat = (await db.prisma.worker.findUniqueOrThrow({ where: { id: child.workerId } })).heartbeat_at;
    await waitFor(
      'thirty more heartbeats of the resumed worker',
      async () => {
        const w = await db.prisma.worker.findUniqueOrThrow({ where: { id: child.workerId } });
        return w.heartbeat_at.getTime() >= resumedBeat.getTime() + 3000 ? w : undefined;
      },
      WAIT_MS,
    );
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const stuckList = await db.prisma.flowRun.findMany({
      where: { stuck_reason: { not: null }, id: runId },
      select: { id: true },
    });
    expect(
      { status: run.status, stuckReason: run.stuck_reason, inStuckList: stuckList.length > 0 },
      'the run is shown stuck as "held by a worker which is gone" while that worker is alive and beating',
    ).toEqual({ status: run.status, stuckReason: null, inStuckList: false });
    // Fix 50 (ADR 0124): the monitor closed the episode it opened, in the run's history.
    const episode = await db.prisma.flowEvent.findMany({
      where: { run_id: runId, type: { in: ['run.stuck', 'run.unstuck'] } },
      orderBy: { id: 'asc' },
    });
    expect(episode.map((e) => [e.type, (e.data as { by?: string }).by ?? null])).toEqual([
      ['run.stuck', null],
      ['run.unstuck', 'monitor'],
    ]);
    await engine.stopMonitor();
  }, 90_000);
});
