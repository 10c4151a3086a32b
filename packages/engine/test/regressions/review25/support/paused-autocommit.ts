import type { SqlDriver } from '../../../../src/db/database.ts';
import type { RuntimeDeps } from '../../../../src/runtime/runtime-deps.ts';
import { gate } from '../../harness.ts';

/**
 * Review 25. The runtime with its driver's autocommitted statements wrapped (`statement`, and `statements`
 * where the driver sends rounds): the first one whose text matches `match` waits at a gate before it is sent.
 * `reached` once it waits; `release` sends it. Transactions go through untouched.
 */
export function pausedAutocommit(deps: RuntimeDeps, match: RegExp) {
  const driver = deps.driver;
  if (!driver) throw new Error('the runtime has no driver');
  const reached = gate();
  const release = gate();
  let armed = true;
  const hold = async (texts: string[]) => {
    if (armed && texts.some((t) => match.test(t))) {
      armed = false;
      reached.open();
      await release.promise;
    }
  };
  const wrapped: SqlDriver = {
    ...driver,
    transaction: (fn, limits) => driver.transaction(fn, limits),
    statement: async (statement, limits) => {
      await hold([statement.text]);
      return driver.statement(statement, limits);
    },
    ...(driver.statements
      ? {
          statements: async (statements, limits) => {
            await hold(statements.map((s) => s.text));
            return driver.statements!(statements, limits);
          },
        }
      : {}),
  };
  return {
    deps: { ...deps, driver: wrapped } as RuntimeDeps,
    reached: reached.promise,
    release: () => release.open(),
  };
}

/**
 * Review 25. The runtime with its driver's transactions wrapped: once `arm()` was called, the next
 * transaction asked for waits at a gate before it begins (so it holds no connection, which matters on PGlite).
 */
export function pausedNextTransaction(deps: RuntimeDeps) {
  const driver = deps.driver;
  if (!driver) throw new Error('the runtime has no driver');
  const reached = gate();
  const release = gate();
  let armed = false;
  const wrapped: SqlDriver = {
    ...driver,
    transaction: async (fn, limits) => {
      if (armed) {
        armed = false;
        reached.open();
        await release.promise;
      }
      return driver.transaction(fn, limits);
    },
  };
  return {
    deps: { ...deps, driver: wrapped } as RuntimeDeps,
    arm: () => (armed = true),
    reached: reached.promise,
    release: () => release.open(),
  };
}
