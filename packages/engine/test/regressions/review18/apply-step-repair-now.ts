import type { Database } from '../../../src/db/database.ts';
import type { Engine, RepairCommand, RepairResult } from '../../../src/index.ts';

/**
 * A step repair drafted against the run and the step as they are right now (their status and attempts
 * read just before), as an operator applying it from the console would: review 18's step repairs.
 */
export async function applyStepRepairNow(
  db: Database,
  e: Engine,
  kind: 'run.resume_from_step' | 'run.retry_step',
  target: { runId: string; stepSequence: number },
  reason: string,
): Promise<RepairResult> {
  const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: target.runId } });
  const step = await db.prisma.actionRun.findFirstOrThrow({
    where: { run_id: target.runId, sequence: target.stepSequence },
  });
  return e.repairs.apply({
    kind,
    target,
    expected: { runStatus: run.status, stepStatus: step.status, stepAttempts: step.attempts },
    actor: 'review18@example.test',
    reason: `review18: ${reason}`,
    idempotencyKey: `review18-${kind}-${target.runId}-${target.stepSequence}`,
  } as RepairCommand);
}
