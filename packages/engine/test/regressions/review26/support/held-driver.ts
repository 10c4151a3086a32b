import type { SqlDriver } from '../../../../src/db/database.ts';
import type { RawResult } from '../../../../src/db/raw-db.ts';
import type { RuntimeDeps } from '../../../../src/runtime/runtime-deps.ts';
import { gate } from '../../harness.ts';

/**
 * Review 26. The runtime with its driver wrapped, for schedules driven by gates:
 * - `finish`: the first autocommitted one-statement finish ("top-level run finishes") waits at a gate before it
 *   is sent (`finish.reached`, `finish.release()`), and its answer is kept (`finish.results`: the status each
 *   item was written as, null where the statement wrote nothing), so a test can tell which path ended the run.
 * - `childStart`: the first transaction, once armed, that wrote a child run of `parentId` waits at a gate
 *   after its work and BEFORE its commit, holding every lock it took (`childStart.reached`,
 *   `childStart.release()`). Only useful where the database has several connections (PostgreSQL).
 * - `beforeBegin`: once armed, the next transaction waits at a gate before it begins (holds no connection);
 *   `beforeBegin.done` settles once it committed or rolled back.
 */
export function heldDriver(deps: RuntimeDeps, parentId: () => string) {
  const driver = deps.driver;
  if (!driver) throw new Error('the runtime has no driver');
  const finishReached = gate();
  const finishRelease = gate();
  const results: (string | null)[][] = [];
  let finishArmed = true;
  const childReached = gate();
  const childRelease = gate();
  let childArmed = false;
  const beginReached = gate();
  const beginRelease = gate();
  const beginDone = gate();
  let beginArmed = false;
  const isFinish = (t: string) => t.includes('sagaflow: top-level run finishes');
  const keep = (t: string, r: RawResult) => {
    if (isFinish(t)) results.push((r.rows as { status: string | null }[]).map((x) => x.status));
  };
  const hold = async (texts: string[]) => {
    if (finishArmed && texts.some(isFinish)) {
      finishArmed = false;
      finishReached.open();
      await finishRelease.promise;
    }
  };
  const wrapped: SqlDriver = {
    ...driver,
    transaction: async (fn, limits) => {
      let held = false;
      if (beginArmed) {
        beginArmed = false;
        held = true;
        beginReached.open();
        await beginRelease.promise;
      }
      const done = driver.transaction(async (tx) => {
        const value = await fn(tx);
        if (childArmed) {
          const [row] = await tx.query<{ n: number }>(
            `select count(*)::int as n from "sagaflow"."flow_runs" where parent_run_id = $1::uuid and xmin::text = txid_current()::text`,
            [parentId()],
          );
          if ((row?.n ?? 0) > 0) {
            childArmed = false;
            childReached.open();
            await childRelease.promise;
          }
        }
        return value;
      }, limits);
      if (held) void done.then(beginDone.open, beginDone.open);
      return done;
    },
    statement: async (statement, limits) => {
      await hold([statement.text]);
      const r = await driver.statement(statement, limits);
      keep(statement.text, r);
      return r;
    },
    ...(driver.statements
      ? {
          statements: async (statements, limits) => {
            await hold(statements.map((s) => s.text));
            const rs = await driver.statements!(statements, limits);
            statements.forEach((s, i) => keep(s.text, rs[i]!));
            return rs;
          },
        }
      : {}),
  };
  return {
    deps: { ...deps, driver: wrapped } as RuntimeDeps,
    finish: { reached: finishReached.promise, release: () => finishRelease.open(), results },
    childStart: {
      arm: () => (childArmed = true),
      reached: childReached.promise,
      release: () => childRelease.open(),
    },
    beforeBegin: {
      arm: () => (beginArmed = true),
      reached: beginReached.promise,
      release: () => beginRelease.open(),
      /** Settles once the held transaction committed or rolled back. */
      done: beginDone.promise,
    },
  };
}
