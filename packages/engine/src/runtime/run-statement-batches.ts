import type { SqlDriver } from '../db/database.ts';
import type { FinalRunStatus } from '../store/finish-run.ts';
import { finishTopRunResults, finishTopRunsStatement, type TopRunFinish } from '../store/finish-top-runs.ts';
import {
  stepTransitionResults,
  stepTransitionsStatement,
  type StepTransition,
  type TransitionResult,
} from '../store/step-transitions.ts';
import { sendRunStatement } from './in-run-transaction.ts';
import type { FusableDeps } from './replay/fused-outcome.ts';
import { StatementBatcher } from './statement-batcher.ts';

/**
 * Statements of each kind in flight at once per driver (ADR 0045): enough for the server to overlap
 * one statement's commit with the next one's work, few enough that the runs that arrive meanwhile
 * share a statement.
 */
export const statementsInFlight = 2;
/** The most runs one statement carries. */
export const runsPerStatement = 64;

interface Batchers {
  transitions: StatementBatcher<StepTransition, TransitionResult>;
  finishes: StatementBatcher<TopRunFinish, FinalRunStatus | null>;
}

const byDriver = new WeakMap<SqlDriver, Batchers>();

function batchersOf(deps: FusableDeps): Batchers {
  let batchers = byDriver.get(deps.driver);
  if (!batchers) {
    const limits = { maxInFlight: statementsInFlight, maxBatch: runsPerStatement };
    batchers = {
      transitions: new StatementBatcher({
        send: async (items) => stepTransitionResults(await sendRunStatement(deps, stepTransitionsStatement(items))),
        key: (item) => item.step.runId,
        ...limits,
      }),
      finishes: new StatementBatcher({
        send: async (items) => finishTopRunResults(await sendRunStatement(deps, finishTopRunsStatement(items))),
        key: (item) => item.runId,
        ...limits,
      }),
    };
    byDriver.set(deps.driver, batchers);
  }
  return batchers;
}

/**
 * A new step's transition (ADR 0042) in one statement with the transitions of the other runs this
 * process has waiting at that moment (ADR 0045). The statement waits for a pooled connection as a run
 * transaction does (`worker.transaction_wait_ms`, then again while none comes, for up to the lease).
 */
export function transitionInBatch(deps: FusableDeps, item: StepTransition): Promise<TransitionResult> {
  return batchersOf(deps).transitions.submit(item);
}

/** A top-level run's finish (ADR 0042), batched likewise with other runs' finishes: the status written, or null. */
export function finishInBatch(deps: FusableDeps, item: TopRunFinish): Promise<FinalRunStatus | null> {
  return batchersOf(deps).finishes.submit(item);
}
