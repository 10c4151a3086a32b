import type { SqlDriver } from '../db/database.ts';
import { isStalePlan } from '../db/run-in-transaction.ts';
import { runsPerStatement, slowStatementMs, statementsInFlight } from '../runtime/run-statement-batches.ts';
import { StatementBatcher } from '../runtime/statement-batcher.ts';
import type { InsertedStart, StartedRun } from '../store/insert-started-run.ts';
import { insertedStartResults, insertStartedRunsStatement } from '../store/insert-started-runs.ts';

/** A start waiting for its statement, with what keeps it out of a statement that carries its twin. */
interface QueuedStart {
  run: StartedRun;
  key: string;
}

const byDriver = new WeakMap<SqlDriver, StatementBatcher<QueuedStart, InsertedStart>>();
let unkeyed = 0;

/**
 * Sends the starts' statement through the driver as `autocommitDb` sends a lone start's (ADR 0043):
 * the pool's own wait for a connection, then its error to the caller, not a run statement's retries
 * for up to a job's lease (`sendRunStatement`): a start is a caller's request, which holds no lease
 * and must not outwait its caller. A statement refused as prepared before a migration changed its
 * result ran nothing and is sent once more, prepared afresh under the driver's new name.
 */
async function sendStarts(driver: SqlDriver, starts: StartedRun[]): Promise<InsertedStart[]> {
  const statement = insertStartedRunsStatement(starts);
  try {
    return insertedStartResults(starts, await driver.statement(statement));
  } catch (err) {
    if (!isStalePlan(err)) throw err;
    return insertedStartResults(starts, await driver.statement(statement));
  }
}

function batcherOf(driver: SqlDriver): StatementBatcher<QueuedStart, InsertedStart> {
  let batcher = byDriver.get(driver);
  if (!batcher) {
    batcher = new StatementBatcher({
      send: (items) =>
        sendStarts(
          driver,
          items.map((i) => i.run),
        ),
      key: (item) => item.key,
      maxInFlight: statementsInFlight,
      slowMs: slowStatementMs,
      maxBatch: runsPerStatement,
    });
    byDriver.set(driver, batcher);
  }
  return batcher;
}

/**
 * A start (run row, history, wakes: all or nothing) in one statement with the other starts this
 * process has waiting at that moment (ADR 0047, the group commit of ADR 0045). Two starts of one flow
 * with one business key never share a statement: the second would fail the first's. A statement that
 * fails (a key another run already holds) wrote nothing, and each of its starts is sent again alone,
 * so every caller meets exactly the fate, and the error, of a lone start.
 */
export function startInBatch(driver: SqlDriver, run: StartedRun): Promise<InsertedStart> {
  const key = run.businessKey === null ? `#${++unkeyed}` : `${run.flowName}\n${run.businessKey}`;
  return batcherOf(driver).submit({ run, key });
}
