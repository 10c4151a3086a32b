import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { createEngine, type Engine } from '../../../src/create-engine.ts';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { ticket } from './repair-fixtures.ts';

/**
 * What the repair race tests share (issue 9): a repair racing the engine on the same run or instance,
 * over real concurrent connections to one PostgreSQL. Exactly one wins; the loser is repair_conflict
 * (or the worker's outcome_rejected); the audit row states what really happened. Faults follow
 * progress: each race starts once the database shows both sides ready, never after a sleep.
 */

/** A gated action's promise resolves when its run key's gate is opened. */
export const gates = new Map<string, () => void>();
export const gated = defineAction({
  name: 'race-gated',
  run: (i: { key: string }) =>
    new Promise<{ from: string }>((resolve) => gates.set(i.key, () => resolve({ from: 'worker' }))),
});
export const gatedFlow = defineFlow({
  name: 'race-gated-flow',
  version: 1,
  run: async (ctx, i: { key: string }) => ctx.action(gated, i).run(),
});

export const who = { actor: 'race-operator', reason: 'racing the engine' };
/** The late writers' transactions: 25 share one pool, so on a loaded machine one may wait past the 2 s default. */
export const lateTx = { maxWait: 60_000, timeout: 60_000 };
export const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

export interface RaceEngines {
  /** The database the workers use; the tests read through it. */
  first: Database & { url?: string };
  /** A second pool on the same database: the operator's connections are not the workers'. */
  second: Database;
  /** Runs gatedFlow and the ticket process; its workers start when a test starts them. */
  workers: Engine;
  /** Applies repairs over the second pool. */
  operator: Engine;
}

/** Opens a test database with two pools and two engines for the file's tests, and closes them after. */
export function useRaceEngines(): RaceEngines {
  const engines = {} as RaceEngines;
  beforeAll(async () => {
    engines.first = await openTestDatabase({ poolSize: 12 });
    engines.second = await createDatabase({ kind: 'postgres', url: engines.first.url!, poolSize: 12 });
    const common = {
      flows: [gatedFlow],
      actions: [gated],
      processes: [ticket],
      logger: pino({ level: 'silent' }),
    };
    engines.workers = createEngine({
      ...common,
      db: engines.first,
      config: { worker: { concurrency: 20, poll_interval_ms: 10 }, logging: { anomaly_level: null } },
    });
    engines.operator = createEngine({
      ...common,
      db: engines.second,
      config: { logging: { anomaly_level: null } },
    });
  });
  afterAll(async () => {
    await engines.workers.stopWorkers();
    await engines.second.close();
    await engines.first.close();
  });
  return engines;
}
