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
 * Statements of each kind in flight at most per driver (ADR 0045). One goes while none is slow, which
 * batches best (the bench's closed loop at c = 8 and 32 did better with one than with two always
 * allowed, within a wide spread between runs on this machine); each statement out longer than
 * {@link slowStatementMs} lets one more go, so a batch held on a run's row lock does not hold up every
 * other run of the process. A statement of any kind (transitions, finishes, and starts since ADR 0063)
 * also lets a second go when enough runs wait behind it ({@link secondStatementFrom}, ADR 0059).
 */
export const statementsInFlight = 4;
/** How long a statement is out before another of its kind may go beside it. */
export const slowStatementMs = 25;
/** The most runs one statement carries. */
export const runsPerStatement = 64;
/**
 * A second transitions (or finishes) statement goes beside the one out, before it is slow, once at
 * least this many runs wait that it does not carry, and no fewer than it carries (ADR 0059): runs
 * enough to fill a statement as well as the one out go now instead of waiting for its return; fewer
 * wait, to ride in a fuller one. A lone run (c = 1) never meets it: nothing waits behind it.
 */
export const secondStatementFrom = 2;

/**
 * The limits every statement batcher of the hot path sends under: transitions, finishes and, since
 * ADR 0063, starts (`api/start-in-batch.ts`) too, so a start waits behind its kind's statement no
 * longer than a transition does.
 */
export const runStatementLimits = {
  maxInFlight: statementsInFlight,
  slowMs: slowStatementMs,
  maxBatch: runsPerStatement,
  secondFrom: secondStatementFrom,
} as const;

interface Batchers {
  transitions: StatementBatcher<StepTransition, TransitionResult>;
  finishes: StatementBatcher<TopRunFinish, FinalRunStatus | null>;
}

const byDriver = new WeakMap<SqlDriver, Batchers>();

function batchersOf(deps: FusableDeps): Batchers {
  let batchers = byDriver.get(deps.driver);
  if (!batchers) {
    batchers = {
      transitions: new StatementBatcher({
        send: async (items) => stepTransitionResults(await sendRunStatement(deps, stepTransitionsStatement(items))),
        key: (item) => item.step.runId,
        ...runStatementLimits,
      }),
      finishes: new StatementBatcher({
        send: async (items) => finishTopRunResults(await sendRunStatement(deps, finishTopRunsStatement(items))),
        key: (item) => item.runId,
        ...runStatementLimits,
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
