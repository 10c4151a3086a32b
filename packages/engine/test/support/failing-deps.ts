import type { SqlDriver } from '../../src/db/database.ts';
import type { RuntimeDeps } from '../../src/runtime/runtime-deps.ts';

/**
 * The runtime with a driver whose transactions fail (the database away, as this worker sees it) while
 * `state.failing` is on. Every refusal is counted in `state.refused`.
 */
export function failingDeps(deps: RuntimeDeps) {
  const driver = deps.driver;
  if (!driver) throw new Error('the runtime has no driver');
  const state = { failing: false, refused: 0 };
  const wrapped: SqlDriver = {
    ...driver,
    transaction: (fn, limits) => {
      if (state.failing) {
        state.refused += 1;
        return Promise.reject(new Error('the database is away (the test fails its transactions)'));
      }
      return driver.transaction(fn, limits);
    },
  };
  return { deps: { ...deps, driver: wrapped } as RuntimeDeps, state };
}
