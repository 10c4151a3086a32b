import { EngineError } from '../errors/engine-error.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { openRunStatuses } from '../store/types.ts';

export type KickResult = { kicked: true } | { kicked: false; reason: string };

/**
 * Sends a fresh job for the step an open run is parked on, so it reaches the claim (seed 000's
 * kick). It skips a run whose current step is Running and not past its reclaim deadline: that row
 * may still be worked on, and only reclaim can tell a dead worker from a slow one.
 */
export async function kickRun(deps: RuntimeDeps, runId: string): Promise<KickResult> {
  const now = deps.clock.now();
  return deps.prisma.$transaction(async (tx) => {
    const run = await tx.flowRun.findUnique({ where: { id: runId }, select: { status: true } });
    if (!run) throw new EngineError('run_not_found', `run ${runId} does not exist`);
    if (!(openRunStatuses as readonly string[]).includes(run.status)) {
      throw new EngineError('run_not_open', `run ${runId} is ${run.status}; only an open run can be kicked`);
    }
    const running = await tx.actionRun.findFirst({
      where: { run_id: runId, status: 'Running', OR: [{ reclaim_stale_at: null }, { reclaim_stale_at: { gt: now } }] },
      orderBy: { sequence: 'desc' },
      select: { sequence: true, name: true, reclaim_stale_at: true },
    });
    if (running) {
      const until = running.reclaim_stale_at
        ? `until its reclaim deadline ${running.reclaim_stale_at.toISOString()}`
        : 'and has no reclaim deadline';
      return {
        kicked: false,
        reason: `step ${running.sequence} (${running.name}) is Running ${until}; it may still be worked on`,
      };
    }
    await enqueueJob(tx, { kind: 'wake-run', runId, availableAt: now });
    // A kick refills the doctor's repair budget for this run.
    await tx.flowRun.update({ where: { id: runId }, data: { repair_count: 0 } });
    await appendFlowEvent(tx, { runId, type: 'run.kicked' });
    return { kicked: true };
  });
}
