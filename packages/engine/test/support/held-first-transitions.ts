import type { Database } from '../../src/db/database.ts';
import { StatementBatcher } from '../../src/runtime/statement-batcher.ts';
import {
  stepTransitionResults,
  stepTransitionsStatement,
  type StepTransition,
  type TransitionResult,
} from '../../src/store/step-transitions.ts';

/**
 * A batcher of step transitions over `db`, one statement at a time, whose first statement waits
 * for `release`: the items submitted meanwhile go together in the next (ADR 0045). `sizes` records
 * how many items each statement carried, so a test sees a batch fall back to its items alone.
 */
export function heldFirstTransitions(db: Database) {
  const sizes: number[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const batcher = new StatementBatcher<StepTransition, TransitionResult>({
    send: async (items) => {
      sizes.push(items.length);
      if (sizes.length === 1) await held;
      return stepTransitionResults(items, await db.driver.statement(stepTransitionsStatement(items)));
    },
    key: (item) => item.step.runId,
    maxInFlight: 1,
    slowMs: 60_000,
    maxBatch: 64,
  });
  return { batcher, sizes, release };
}
