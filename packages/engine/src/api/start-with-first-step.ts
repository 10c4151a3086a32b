import { randomUUID } from 'node:crypto';
import type { SqlDriver } from '../db/database.ts';
import type { FlowDefinition } from '../definitions/flow-context.ts';
import { inJsonbOrder } from '../input/in-jsonb-order.ts';
import { probeFirstStep, type HeldReplay } from '../runtime/replay/probe-first-step.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { startedRunRow } from '../store/insert-started-run-with-step.ts';
import type { InsertedStart, StartedRun } from '../store/insert-started-run.ts';
import { markStepReclaimable } from '../store/mark-step-reclaimable.ts';
import { startInBatch, startWithStepInBatch } from './start-in-batch.ts';

/**
 * A start handed to its own pool (ADR 0029), its run written active (ADR 0041): the run's replay is
 * begun here, from the row the start would write, under an id drawn now, before anything is written
 * (ADR 0048). When its first durable write is a new action step's claim, ONE statement writes the
 * start and that step, claimed by this worker at attempt 1, and the pool's replay runs the step from
 * there, going on with that begun replay (ADR 0097): the start's result carries it, held at the
 * claim. Otherwise (or when the claim would come at or past the run timeout, which the load refuses)
 * the start is written alone, as before, and that begun replay is dropped: it wrote nothing. So is
 * it when the start fails.
 */
export async function startWithFirstStep(
  deps: RuntimeDeps & { driver: SqlDriver },
  flow: FlowDefinition,
  run: StartedRun,
): Promise<StartedFlow> {
  const id = randomUUID();
  // The input as the replay after the start will read it back: keys in jsonb's order.
  const probed = await probeFirstStep(deps, flow, { ...startedRunRow(id, run), input: inJsonbOrder(run.input) });
  const first = probed?.claim;
  if (!first || (run.runTimeoutAt !== null && first.claimedAt.getTime() >= run.runTimeoutAt.getTime())) {
    probed?.held?.drop();
    return startInBatch(deps.driver, run);
  }
  let started: InsertedStart;
  try {
    started = await startWithStepInBatch(deps.driver, { id, run, ...first, workerId: deps.workerId });
  } catch (err) {
    probed.held?.drop();
    throw err;
  }
  if (started.loaded?.firstStep) return { ...started, held: probed.held };
  probed.held?.drop();
  return started;
}

/** A start's result; with the replay its probe holds at the first step the start wrote (ADR 0097). */
export interface StartedFlow extends InsertedStart {
  held?: HeldReplay | null;
}

/**
 * For a start whose pool stopped after it reserved the slot: that pool gives the wake back to the
 * queue instead of running it, so the first step the start claimed for it (if any) is opened to the
 * next claim first, as a reclaim repair opens a gone worker's step (the next replay claims it at
 * attempt 2, which fences this one off). Otherwise the step would stay Running under a claim no
 * replay holds, until its reclaim deadline, or for ever without one. If this write fails, the step
 * waits for the doctor's or an operator's reclaim, as a crashed worker's does.
 */
export async function releaseFirstStep(deps: RuntimeDeps, started: InsertedStart): Promise<void> {
  const step = started.loaded?.firstStep;
  if (!step) return;
  try {
    await markStepReclaimable(deps.prisma, {
      table: 'action_runs',
      id: step.id,
      attempts: step.attempts,
      claimedBy: deps.workerId,
      now: deps.clock.now(),
    });
  } catch (err) {
    deps.logger.warn(
      { err, runId: started.runId, stepId: step.id },
      'could not open the first step of a start whose pool stopped; it waits for a reclaim',
    );
  }
}
