import type { SqlDriver } from '../../db/database.ts';
import type { TransitionResult } from '../../store/step-transition.ts';
import { stepTransitionResults, stepTransitionsStatement, type StepTransition } from '../../store/step-transitions.ts';
import { sendRunStatement } from '../in-run-transaction.ts';
import type { FusableDeps } from '../replay/fused-outcome.ts';
import { StatementBatcher } from '../statement-batcher.ts';

/**
 * Statements of step transitions in flight at once per driver (ADR 0045): enough for the server's
 * cores to overlap one statement's commit with the next one's work, few enough that the runs that
 * arrive meanwhile share a statement.
 */
export const transitionsInFlight = 2;
/** The most runs one transition statement carries. */
export const transitionsPerStatement = 64;

const batchers = new WeakMap<SqlDriver, StatementBatcher<StepTransition, TransitionResult>>();

/**
 * A new step's transition (ADR 0042), sent in one statement with the transitions of the other runs
 * this process has waiting at that moment (ADR 0045). The statement waits for a pooled connection as
 * a run transaction does (`worker.transaction_wait_ms`, then again while none comes, for up to the lease).
 */
export function transitionInBatch(deps: FusableDeps, item: StepTransition): Promise<TransitionResult> {
  let batcher = batchers.get(deps.driver);
  if (!batcher) {
    batcher = new StatementBatcher({
      send: async (items) => stepTransitionResults(await sendRunStatement(deps, stepTransitionsStatement(items))),
      key: (i) => i.step.runId,
      maxInFlight: transitionsInFlight,
      maxBatch: transitionsPerStatement,
    });
    batchers.set(deps.driver, batcher);
  }
  return batcher.submit(item);
}
