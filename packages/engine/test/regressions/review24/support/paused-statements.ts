import type { SqlDriver, SqlSession } from '../../../../src/db/database.ts';
import type { RuntimeDeps } from '../../../../src/runtime/runtime-deps.ts';
import { gate } from '../../harness.ts';

/**
 * Review 24. The runtime with its driver's transactions wrapped: the first statement sent inside a
 * transaction whose text matches `match` waits at a gate before it is sent (the transaction's earlier
 * statements, and their locks, already done). `reached` once it waits; `release` sends it.
 */
export function pausedStatement(deps: RuntimeDeps, match: RegExp) {
  const driver = deps.driver;
  if (!driver) throw new Error('the runtime has no driver');
  const reached = gate();
  const release = gate();
  let armed = true;
  const wrap = (tx: SqlSession): SqlSession => ({
    ...tx,
    exec: (sql) => tx.exec(sql),
    query: (sql, params) => tx.query(sql, params),
    raw: async (statement) => {
      if (armed && match.test(statement.text)) {
        armed = false;
        reached.open();
        await release.promise;
      }
      return tx.raw(statement);
    },
  });
  const wrapped: SqlDriver = {
    ...driver,
    transaction: (fn, limits) => driver.transaction((tx) => fn(wrap(tx)), limits),
  };
  return {
    deps: { ...deps, driver: wrapped } as RuntimeDeps,
    reached: reached.promise,
    release: () => release.open(),
  };
}
