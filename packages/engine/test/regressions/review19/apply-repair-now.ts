import type { Database } from '../../../src/db/database.ts';
import type { Engine, RepairCommand, RepairResult } from '../../../src/index.ts';

let n = 0;

/**
 * A repair drafted against the run (and, for a step repair, its step) as they are right now, read just
 * before, as an operator applying it from the console would: review 19's kicks and step repairs.
 */
export async function applyRepairNow(
  db: Database,
  e: Engine,
  cmd:
    | { kind: 'run.kick'; runId: string }
    | { kind: 'run.complete_step'; runId: string; stepSequence: number; output: unknown }
    | { kind: 'run.retry_step'; runId: string; stepSequence: number },
  reason: string,
): Promise<RepairResult> {
  n += 1;
  const mine = n;
  const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: cmd.runId } });
  const common = {
    actor: 'review19@example.test',
    reason: `review19: ${reason}`,
    idempotencyKey: `review19-${cmd.kind}-${cmd.runId}-${mine}`,
  };
  if (cmd.kind === 'run.kick')
    return e.repairs.apply({
      kind: cmd.kind,
      target: { runId: cmd.runId },
      expected: { runStatus: run.status },
      ...common,
    } as RepairCommand);
  const step = await db.prisma.actionRun.findFirstOrThrow({
    where: { run_id: cmd.runId, sequence: cmd.stepSequence },
  });
  return e.repairs.apply({
    kind: cmd.kind,
    target: { runId: cmd.runId, stepSequence: cmd.stepSequence },
    expected: { runStatus: run.status, stepStatus: step.status, stepAttempts: step.attempts },
    ...(cmd.kind === 'run.complete_step' ? { output: cmd.output } : {}),
    ...common,
  } as RepairCommand);
}
