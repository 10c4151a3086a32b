import type { Db } from '../types.ts';

/**
 * A run's newest `limit` run.stuck / run.unstuck events, newest first: the whole stuck story of a
 * run whatever page of its events a reader holds, so an episode older than the newest page of events
 * is still shown (a run stuck for an hour that then recorded 500 steps). Read through the partial
 * index of those events alone (migration 0023, its predicate word for word in the text: a parameter
 * would not let the planner prove it), never by walking the run's other events.
 */
export async function listRunStuckEvents(db: Db, runId: string, limit: number) {
  return db.$queryRaw<{ id: bigint; type: string; sequence: number | null; data: unknown; at: Date }[]>`
    select id, type, sequence, data, at from "sagaflow"."flow_events"
     where run_id = ${runId}::uuid and type in ('run.stuck', 'run.unstuck')
     order by id desc
     limit ${limit}::int`;
}
