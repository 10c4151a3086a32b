import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { bareEngine } from '../harness.ts';

const flow = defineFlow({ name: 'tz-run', version: 1, run: async () => 'done' });

/**
 * Review of ADR 0037 decision 1. The load decides "overdue" in SQL, against `${now}::timestamptz`,
 * and the code decides it again in JS, from the run_timeout_at it read back; a disagreement throws.
 * Prisma's pg adapter sends a Date as a UTC wall-clock text WITHOUT a zone, which the server reads in
 * the session's TimeZone: on a server that is not on UTC (here America/New_York, a common setting) the
 * deadline is stored shifted, and the two verdicts differ for as long as the offset. A run past its
 * run timeout must end TimedOut, not fail every replay.
 */
describe('a run past its run timeout on a PostgreSQL server whose TimeZone is not UTC', () => {
  let db: Database;
  beforeAll(async () => {
    const first = await openTestDatabase();
    await first.prisma.$executeRawUnsafe(
      `do $$ begin execute format('alter database %I set timezone to %L', current_database(), 'America/New_York'); end $$`,
    );
    await first.close();
    // New connections take the database's TimeZone.
    db = await createDatabase({ kind: 'postgres', url: first.url! });
  });
  afterAll(async () => {
    await db.close();
  });

  it('stores the deadline it was given and ends the run TimedOut', async () => {
    const [tz] = await db.prisma.$queryRawUnsafe<{ tz: string }[]>(`select current_setting('TimeZone') as tz`);
    expect(tz?.tz).toBe('America/New_York');
    const clock = new TestClock(new Date('2026-06-01T12:00:00.000Z'));
    const e = bareEngine(db, { flows: [flow], actions: [], clock });
    const { runId } = await e.startFlow(flow, null, { runTimeoutSeconds: 60 });
    const stored = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(stored.run_timeout_at?.toISOString()).toBe('2026-06-01T12:01:00.000Z');
    clock.advance(61_000);
    await expect(executeRun(e.runtime, runId)).resolves.toBe('finished');
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe('TimedOut');
  });
});
