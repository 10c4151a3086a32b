import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { seedStep } from '../../support/seed-step.ts';
import { openTestDatabase } from '../../support/test-database.ts';

/**
 * Review 60 (ADR 0134 §1: "The doctor's set-based redispatch (R1–R3) skips held runs the same way, in its
 * one statement"; seed 000's doctor R1: a Pending run whose job was lost past the grace gets a fresh job).
 * Attacked: two runs Pending with no job past the grace, one held by another session. Does one doctor pass
 * redispatch the free one at once and pass over the held one, and once it is let go, redispatch it exactly
 * once (one `doctor.redispatched` and one job per run)?
 */
describe('review 60: the doctor redispatch with one run held (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({ db, flows: [], actions: [] });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await t?.close();
    await db?.close();
  });

  it('redispatches the free run, passes over the held one, then redispatches it once', async () => {
    const { engine, clock } = t;
    await engine.stopWorkers();
    const a = await seedStep(db);
    const b = await seedStep(db);
    clock.advance(300_000);
    held = await holdRuns(db.url!, [a.runId]);
    const started = Date.now();
    const first = await engine.sweepDoctor();
    const ms = Date.now() - started;
    await held.rollback();
    held = undefined;
    const second = await engine.sweepDoctor();
    const third = await engine.sweepDoctor();
    const count = async (runId: string) => ({
      redispatched: await db.prisma.flowEvent.count({ where: { run_id: runId, type: 'doctor.redispatched' } }),
      jobs: await db.prisma.job.count({ where: { run_id: runId } }),
    });
    expect({
      first: first.redispatched.map((r) => r.runId),
      second: second.redispatched.map((r) => r.runId),
      third: third.redispatched.length,
      fast: ms < 2_000,
      a: await count(a.runId),
      b: await count(b.runId),
    }).toEqual({
      first: [b.runId],
      second: [a.runId],
      third: 0,
      fast: true,
      a: { redispatched: 1, jobs: 1 },
      b: { redispatched: 1, jobs: 1 },
    });
  }, 40_000);
});
