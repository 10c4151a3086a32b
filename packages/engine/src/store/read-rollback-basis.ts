import type { Db } from './types.ts';

/**
 * What a rollback plan was made from: each step's and each compensation's status and attempts, as one
 * string. Read before a plan and again under the run's lock: when the two differ, the run moved on while
 * its rollback was planned, and the plan is made again (ADR 0085; the monitor's expiry too, ADR 0088).
 */
export async function readRollbackBasis(db: Db, runId: string): Promise<string> {
  const steps = await db.actionRun.findMany({
    where: { run_id: runId },
    orderBy: { sequence: 'asc' },
    select: { sequence: true, status: true, attempts: true },
  });
  const compensations = await db.compensationRun.findMany({
    where: { run_id: runId },
    orderBy: { id: 'asc' },
    select: { id: true, status: true, attempts: true },
  });
  return JSON.stringify([steps, compensations]);
}
