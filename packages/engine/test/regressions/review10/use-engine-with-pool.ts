import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { jobChannel } from '../../../src/store/job-channel.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

type EngineOptions = Omit<Parameters<typeof createTestEngine>[0], 'db'>;

/**
 * This review's setup: one test database per file, and per test an engine whose pool is started
 * and has made its first claim, so that its starts are handed to it (ADR 0029) and go with their
 * first step (ADR 0048). The engine is closed after each test, the database after the file.
 *
 * A pool refuses a hand-off once it has not asked the job table for work for two poll intervals
 * (`stale`). With the test kit's 10 ms poll that is 20 ms: on a loaded 2-core machine a claim on
 * PGlite (in this thread) or a late timer passes that, the start then goes through the queue
 * without its first step, and a test of the fused start fails on what it never set up (step 1 at
 * attempt 1 instead of 2, in a CI run). So the pool polls once a minute (the most the config
 * allows): its claims come from its first pass, its listener and its own nudges, and a job due by
 * the test clock alone is announced with {@link announceJob}.
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
      const config = { ...options.config, worker: { poll_interval_ms: 60_000, ...options.config?.worker } };
      t = await createTestEngine({ ...options, config, db });
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

/**
 * Wakes the listening pools on this database as a process that queued a job due now would: they
 * claim at once. For a job that came due only because a test moved its clock (nothing announces
 * that, and the pool here polls once a minute).
 */
export async function announceJob(db: Database): Promise<void> {
  await db.driver.exec(`notify ${jobChannel}, 'wake-run'`);
}
