import type { Database } from '../../../../src/db/database.ts';
import { waiter } from '../../../repairs/support/repair-fixtures.ts';
export { parkedWaiters } from '../../../support/parked-waiters.ts';

/**
 * Gives `parentId` `count` open child runs (parked, cancel policy propagate) in one statement, as a
 * fan-out of `ctx.child` calls leaves them: what the parent's expiry must cancel.
 */
export async function seedOpenChildren(db: Database, parentId: string, count: number): Promise<void> {
  await db.prisma.$executeRaw`
    insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, parent_run_id, parent_sequence, parent_cancel_policy)
    select ${waiter.name}, 1, 'Waiting', '{}'::jsonb, ${parentId}::uuid, 100 + g, 'propagate'
      from generate_series(1, ${count}::int) g`;
}

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
