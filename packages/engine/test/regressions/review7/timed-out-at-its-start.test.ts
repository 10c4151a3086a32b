import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow } from '../../../src/index.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine } from '../harness.ts';

const flow = defineFlow({ name: 'review7-timed-out-at-start', version: 1, run: async () => 'ran' });

/**
 * Review of ADR 0041. A start handed to its own pool writes the run already active on the ground that
 * a run just written is on time. A run timeout under a millisecond (accepted: any seconds above 0) is
 * due at the very instant of the start: the load would have left that run unmarked and timed it out,
 * but the start wrote it Running, with `started_at` and `run.running`, a run whose code never ran.
 */
describe(`a handed-off run whose run timeout is already due at its start (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('ends TimedOut with the history a load would have left', async () => {
    const e = bareEngine(db, { flows: [flow], actions: [] });
    e.startWorkers();
    const { runId } = await e.startFlow(flow, null, { runTimeoutSeconds: 0.0004 });
    const run = await waitFor('the run ends', async () => {
      const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      return r.finished_at ? r : undefined;
    });
    await e.stopWorkers();
    const events = (await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } })).map(
      (x) => x.type,
    );
    expect(run.status).toBe('TimedOut');
    expect({ events, startedAt: run.started_at }).toEqual({ events: ['run.started', 'run.timedout'], startedAt: null });
  });
});
