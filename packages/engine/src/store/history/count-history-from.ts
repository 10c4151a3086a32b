import type { Db } from '../types.ts';
import { oneRun } from './history-window.ts';

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
  const steps =
    from.sequence === undefined
      ? null
      : await db.actionRun.count({ where: { run_id: runId, sequence: { gte: from.sequence } } });
  const events =
    from.eventId === undefined
      ? null
      : // A range of one run: the count reads (run_id, id) from the oldest held, never the primary
        // key from there past every other run's newer events (page-flow-events).
        await db.flowEvent.count({ where: { run_id: oneRun(runId), id: { gte: from.eventId } } });
  return { steps, events };
}
