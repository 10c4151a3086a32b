import { randomUUID } from 'node:crypto';
import type { SqlDriver } from '../db/database.ts';
import type { FlowDefinition } from '../definitions/flow-context.ts';
import { probeFirstStep } from '../runtime/replay/probe-first-step.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { startedRunRow } from '../store/insert-started-run-with-step.ts';
import type { InsertedStart, StartedRun } from '../store/insert-started-run.ts';
import { startInBatch, startWithStepInBatch } from './start-in-batch.ts';

/**
 * A start handed to its own pool (ADR 0029), its run written active (ADR 0041): the run's replay is
 * begun here, from the row the start would write, under an id drawn now, before anything is written
 * (ADR 0048). When its first durable write is a new action step's claim, ONE statement writes the
 * start and that step, claimed by this worker at attempt 1, and the pool's replay runs the step from
 * there; otherwise (or when the claim would come at or past the run timeout, which the load refuses)
 * the start is written alone, as before, and that begun replay is dropped: it wrote nothing.
 */
export async function startWithFirstStep(
  deps: RuntimeDeps & { driver: SqlDriver },
  flow: FlowDefinition,
  run: StartedRun,
): Promise<InsertedStart> {
  const id = randomUUID();
  const first = await probeFirstStep(deps, flow, startedRunRow(id, run));
  if (!first || (run.runTimeoutAt !== null && first.claimedAt.getTime() >= run.runTimeoutAt.getTime()))
    return startInBatch(deps.driver, run);
  return startWithStepInBatch(deps.driver, { id, run, ...first, workerId: deps.workerId });
}
