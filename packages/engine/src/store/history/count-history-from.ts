import type { Db } from '../types.ts';

/**
 * How many of a run's steps and events lie at or after the oldest ones a reader holds: an index
 * range count over what it already read. A reader that holds fewer missed a row that committed
 * after a newer one it saw (two parallel steps record at once), and reads its window again.
 */
export async function countHistoryFrom(
  db: Db,
  runId: string,
  from: { sequence?: number | undefined; eventId?: bigint | undefined },
) {
  const [steps, events] = await Promise.all([
    from.sequence === undefined
      ? null
      : db.actionRun.count({ where: { run_id: runId, sequence: { gte: from.sequence } } }),
    from.eventId === undefined ? null : db.flowEvent.count({ where: { run_id: runId, id: { gte: from.eventId } } }),
  ]);
  return { steps, events };
}
