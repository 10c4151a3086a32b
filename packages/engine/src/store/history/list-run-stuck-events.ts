import type { Db } from '../types.ts';

/** The events that open and close a run's stuck episodes (ADR 0035 addendum). */
export const stuckEventTypes = ['run.stuck', 'run.unstuck'] as const;

/**
 * A run's newest `limit` run.stuck / run.unstuck events, newest first, through the (run_id, id)
 * index: the whole stuck story of a run whatever page of its events a reader holds, so an episode
 * older than the newest page of events is still shown (a run that was stuck for an hour and then
 * recorded 500 steps). Few per run: a run is stuck a handful of times, not per step.
 */
export async function listRunStuckEvents(db: Db, runId: string, limit: number) {
  return db.flowEvent.findMany({
    where: { run_id: runId, type: { in: [...stuckEventTypes] } },
    orderBy: { id: 'desc' },
    take: limit,
  });
}
