import type { Database } from '../../../../src/db/database.ts';
export { parkedWaiters } from '../../../support/parked-waiters.ts';
export { seedOpenChildren } from '../../../support/seed-open-children.ts';

/** What an operator can see of `runId` being stuck: its stuck reason and the anomalies journaled for it. */
export async function visibility(db: Database, runId: string) {
  const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
  const anomalies = await db.prisma.anomalyLog.findMany({ where: { run_id: runId }, select: { code: true } });
  return {
    expired: run.expired_at !== null,
    stuckReason: run.stuck_reason,
    expiryAttempts: run.expiry_attempts,
    anomalies: anomalies.map((a) => a.code),
  };
}
