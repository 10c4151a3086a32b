import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

type EngineOptions = Omit<Parameters<typeof createTestEngine>[0], 'db'>;

/**
 * This review's setup: one test database per file, and per test an engine whose pool is started
 * and has made its first claim, so that its starts are handed to it (ADR 0029) and go with their
 * first step (ADR 0048). The engine is closed after each test, the database after the file.
 */
export function useEngineWithPool() {
  let db: Database;
  let t: TestEngine | null = null;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterEach(async () => {
    await t?.close();
    t = null;
  });
  afterAll(async () => {
    await db.close();
  });
  return {
    db: () => db,
    async start(options: EngineOptions): Promise<TestEngine> {
      t = await createTestEngine({ ...options, db });
      t.engine.startWorkers();
      const engine = t.engine;
      await waitFor('the pool to make its first claim', async () =>
        (engine.workerCounters()?.claims ?? 0) > 0 ? true : undefined,
      );
      return t;
    },
  };
}

/** The run once it finished (or, with `orStuck`, once it is stuck), read from the database. */
export function finished(db: Database, runId: string, orStuck = false) {
  return waitFor(`run ${runId} to finish${orStuck ? ' or get stuck' : ''}`, async () => {
    const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    return r.finished_at || (orStuck && r.stuck_reason) ? r : undefined;
  });
}
