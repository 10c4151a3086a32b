import type { Database } from '../../src/db/database.ts';
import { waitFor } from './wait-for.ts';

/**
 * The journal codes of a hung worker's late outcome on `runId`, once there is one: rejected by the fence
 * while the run is open, refused once the rollback beside it has ended the run. Its journal row follows
 * the hung worker's own write, which may come after the run's end, so it is waited for.
 */
export function lateOutcomeTurnedAway(db: Database, runId: string): Promise<string[]> {
  return waitFor('the late success to be journaled', async () => {
    const codes = (await db.prisma.anomalyLog.findMany({ where: { run_id: runId } }))
      .map((a) => a.code)
      .filter((c) => c === 'outcome_rejected' || c === 'write_refused');
    return codes.length > 0 ? codes : undefined;
  });
}
