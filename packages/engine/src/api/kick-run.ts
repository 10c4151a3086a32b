import { EngineError } from '../errors/engine-error.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { assertUuid } from '../input/assert-uuid.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { enqueueWakeOnce } from '../store/enqueue-job.ts';
import { findOrphanedSteps } from '../store/find-orphaned-steps.ts';
import { lockOpenRun } from '../store/lock-open-run.ts';
import type { Db } from '../store/types.ts';
import { reclaimOrphan } from './reclaim-step.ts';
import { inOperatorTransaction, operatorStatement } from './operator-transaction.ts';

export type KickResult = { kicked: true } | { kicked: false; reason: string };

/**
 * Sends a fresh job for the step an open run is parked on, so it reaches the claim (seed 000's
 * kick). It skips a run whose current step or compensation is Running and not past its reclaim deadline: that row
 * may still be worked on, and only reclaim can tell a dead worker from a slow one.
 */
export async function kickRun(deps: RuntimeDeps, runId: string): Promise<KickResult> {
  assertUuid(runId, 'runId');
  const now = deps.clock.now();
  const result = await inOperatorTransaction(
    deps,
    (tx) => kickInTransaction(tx, deps, runId, now),
    `kick of run ${runId}`,
  );
  if (!result.kicked || result.eventId === undefined) return result;
  // Read the kick back: a transaction aborted inside (a failing statement whose error was
  // swallowed) reports success but rolls back on COMMIT, refill, job and history row with it.
  // Named by its run as well: flow_events' key is (run_id, id), so the id alone would scan (ADR 0054).
  const { eventId } = result;
  const landed = await operatorStatement(deps, () =>
    deps.prisma.flowEvent.count({ where: { run_id: runId, id: eventId } }),
  );
  if (landed === 0) {
    const after = await deps.prisma.flowRun.findUniqueOrThrow({
      where: { id: runId },
      select: { status: true, repair_count: true, flow_name: true },
    });
    await deps.journal({
      code: 'claim_not_committed',
      message: `the kick of run ${runId} (${after.flow_name}) did not commit: its repair budget was not refilled and no job was sent; kick it again`,
      runId,
      name: after.flow_name,
      site: 'kick',
      details: { status: after.status, repair_count: after.repair_count },
    });
    return {
      kicked: false,
      reason: 'the kick did not commit (claim_not_committed); see the anomaly log and kick again',
    };
  }
  return { kicked: true };
}

/**
 * The kick inside the caller's transaction (a repair's, which holds the run row already): locks the
 * open run, refuses a run whose live step is Running and not stale, else a fresh wake job, the
 * refilled repair budget and `run.kicked` in the run's history. A step held by a worker that is
 * gone (ADR 0010) is reclaimed first.
 */
export async function kickInTransaction(
  tx: Prisma.TransactionClient,
  deps: RuntimeDeps,
  runId: string,
  now: Date,
): Promise<KickResult & { eventId?: bigint }> {
  // Locked until commit (lockOpenRun): a kick never lands after the run's terminal event. No key update, as the
  // doctor's reclaim and an operator's reclaim take it: a kick and the doctor at once reclaim a step once (review 60).
  if (!(await lockOpenRun(tx, runId, 'no key update'))) {
    const run = await tx.flowRun.findUnique({ where: { id: runId }, select: { status: true } });
    if (!run) throw new EngineError('run_not_found', `run ${runId} does not exist`);
    throw new EngineError('run_not_open', `run ${runId} is ${run.status}; only an open run can be kicked`);
  }
  // A step held by a worker that is gone (ADR 0010) is opened to the claim first: it is no longer live.
  const orphans = await findOrphanedSteps(tx, {
    deadAfterSeconds: deps.config.worker.dead_after_seconds,
    runId,
    limit: 100,
  });
  // The rows are reopened without a wake each: the run gets one wake below (two would race).
  let reopened = false;
  for (const orphan of orphans)
    reopened = (await reclaimOrphan(deps, tx, orphan, 'kick', now, { wake: false })).reclaimed || reopened;
  const blocked = await whyKickWaits(tx, runId, now);
  if (blocked) {
    // Another row is still worked on; the reopened one still needs its run woken once.
    if (reopened) await enqueueWakeOnce(tx, { runId, now });
    return { kicked: false, reason: blocked };
  }
  // One wake: a due one still waiting for a worker is the kick's too (a second would race it, review 60).
  await enqueueWakeOnce(tx, { runId, now });
  // A kick refills the doctor's repair budget for this run.
  await tx.flowRun.update({ where: { id: runId }, data: { repair_count: 0 } });
  const event = await appendFlowEvent(tx, { runId, type: 'run.kicked' });
  await deps.hooks.runKicked?.(tx, { runId });
  return { kicked: true, eventId: event.id };
}

/**
 * Why a kick would send nothing now: the run's live step or compensation is Running and not past
 * its reclaim deadline (it may still be worked on). Null when a kick would send a fresh job.
 * `reclaiming`: rows held by a gone worker that the kick reclaims first (a preview's view of them).
 */
export async function whyKickWaits(
  db: Db,
  runId: string,
  now: Date,
  reclaiming: readonly string[] = [],
): Promise<string | null> {
  const live = {
    status: 'Running',
    id: { notIn: [...reclaiming] },
    OR: [{ reclaim_stale_at: null }, { reclaim_stale_at: { gt: now } }],
  };
  const step = await db.actionRun.findFirst({
    where: { run_id: runId, ...live },
    orderBy: { sequence: 'desc' },
    select: { sequence: true, name: true, reclaim_stale_at: true },
  });
  const comp = step
    ? null
    : await db.compensationRun.findFirst({
        where: { run_id: runId, ...live },
        orderBy: [{ rollback_level: 'desc' }, { ordinal: 'asc' }],
        select: { rollback_level: true, name: true, reclaim_stale_at: true },
      });
  const running = step
    ? { what: `step ${step.sequence} (${step.name})`, staleAt: step.reclaim_stale_at }
    : comp
      ? { what: `compensation ${comp.name} of rollback level ${comp.rollback_level}`, staleAt: comp.reclaim_stale_at }
      : null;
  if (!running) return null;
  const until = running.staleAt
    ? `until its reclaim deadline ${running.staleAt.toISOString()}`
    : 'and has no reclaim deadline';
  return `${running.what} is Running ${until}; it may still be worked on`;
}
