import type { SqlDriver } from '../db/database.ts';
import type { RawResult, RawStatement } from '../db/raw-db.ts';
import { isStalePlan } from '../db/run-in-transaction.ts';
import { runStatementLimits, sendsRounds, submitToRound, type RoundKind } from '../runtime/run-statement-batches.ts';
import { StatementBatcher } from '../runtime/statement-batcher.ts';
import type { InsertedStart, StartedRun } from '../store/insert-started-run.ts';
import {
  insertStartedRunsWithStepStatement,
  startedWithStepResults,
  type StartWithFirstStep,
} from '../store/insert-started-run-with-step.ts';
import { insertedStartResults, insertStartedRunsStatement } from '../store/insert-started-runs.ts';

/** A start waiting for its statement, with what keeps it out of a statement that carries its twin. */
interface QueuedStart<S> {
  start: S;
  key: string;
}

/** A kind of start statement: its text for some starts, and what each of them wrote. */
interface StartStatement<S> {
  statement: (starts: S[]) => RawStatement;
  results: (starts: S[], result: RawResult) => InsertedStart[];
}

interface Batchers {
  starts: StatementBatcher<QueuedStart<StartedRun>, InsertedStart>;
  withFirstStep: StatementBatcher<QueuedStart<StartWithFirstStep>, InsertedStart>;
}

const byDriver = new WeakMap<SqlDriver, Batchers>();
let unkeyed = 0;

/**
 * Sends a start statement through the driver as `autocommitDb` sends a lone start's (ADR 0043):
 * the pool's own wait for a connection, then its error to the caller, not a run statement's retries
 * for up to a job's lease (`sendRunStatement`): a start is a caller's request, which holds no lease
 * and must not outwait its caller. A statement refused as prepared before a migration changed its
 * result ran nothing and is sent once more, prepared afresh under the driver's new name.
 */
async function sendStarts<S>(driver: SqlDriver, kind: StartStatement<S>, starts: S[]): Promise<InsertedStart[]> {
  const statement = kind.statement(starts);
  try {
    return kind.results(starts, await driver.statement(statement));
  } catch (err) {
    if (!isStalePlan(err)) throw err;
    return kind.results(starts, await driver.statement(statement));
  }
}

/** A kind of start statement as a round carries it (ADR 0066): sent alone, it goes as {@link sendStarts} sends it. */
function startKind<S>(name: string, kind: StartStatement<S>): RoundKind<S, InsertedStart> {
  return {
    order: name === 'starts' ? 0 : 1,
    name,
    resentUnsent: false,
    statement: kind.statement,
    results: kind.results,
    alone: (starts, driver) => sendStarts(driver, kind, starts),
  };
}

const plainStarts = startKind('starts', { statement: insertStartedRunsStatement, results: insertedStartResults });
const startsWithStep = startKind('starts with first step', {
  statement: insertStartedRunsWithStepStatement,
  results: startedWithStepResults,
});

/**
 * One start statement's batcher: the starts waiting at one moment, no two of one business key, under
 * the transitions' limits (ADR 0063): a second statement goes beside the one out, before it is slow,
 * once the starts waiting would fill it as well (ADR 0059), instead of all of them waiting for its return.
 */
function startBatcher<S>(driver: SqlDriver, kind: RoundKind<S, InsertedStart>) {
  return new StatementBatcher<QueuedStart<S>, InsertedStart>({
    send: (items) =>
      kind.alone(
        items.map((i) => i.start),
        driver,
        undefined,
      ),
    key: (item) => item.key,
    ...runStatementLimits,
  });
}

function batchersOf(driver: SqlDriver): Batchers {
  let batchers = byDriver.get(driver);
  if (!batchers) {
    batchers = { starts: startBatcher(driver, plainStarts), withFirstStep: startBatcher(driver, startsWithStep) };
    byDriver.set(driver, batchers);
  }
  return batchers;
}

/** What keeps two starts of one flow with one business key out of one statement: the second would fail the first's. */
const keyOf = (run: StartedRun) => (run.businessKey === null ? `#${++unkeyed}` : `${run.flowName}\n${run.businessKey}`);

/**
 * A start (run row, history, wakes: all or nothing) in one statement with the other starts this
 * process has waiting at that moment (ADR 0047, the group commit of ADR 0045). Two starts of one flow
 * with one business key never share a statement: the second would fail the first's. A statement that
 * fails (a key another run already holds) wrote nothing, and each of its starts is sent again alone,
 * so every caller meets exactly the fate, and the error, of a lone start.
 */
export function startInBatch(driver: SqlDriver, run: StartedRun): Promise<InsertedStart> {
  const key = keyOf(run);
  if (sendsRounds(driver)) return submitToRound(driver, plainStarts, run, `start\n${key}`);
  return batchersOf(driver).starts.submit({ start: run, key });
}

/**
 * A start with its first step, claimed (ADR 0048), in one statement with the other such starts this
 * process has waiting at that moment, batched exactly like {@link startInBatch}: its own batcher
 * (the statement's text differs), the same key and the same resend, start by start, of a statement
 * the server refused.
 */
export function startWithStepInBatch(driver: SqlDriver, start: StartWithFirstStep): Promise<InsertedStart> {
  const key = keyOf(start.run);
  if (sendsRounds(driver)) return submitToRound(driver, startsWithStep, start, `start\n${key}`);
  return batchersOf(driver).withFirstStep.submit({ start, key });
}
