import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';

/**
 * expiry_failed is for an OPEN run that stays overdue ("the run stays overdue and is tried again once
 * its hold-off window opens"), and a finished run carries no stuck reason (finish-run.ts clears it).
 * markRunExpired is conditional on the run still being open; holdOffExpiry (hold-off-expiry.ts) is
 * conditional only on `expired_at is null`. A run that finishes while the sweep is planning it, and
 * whose planning replay then throws, is counted, held off, journaled expiry_failed and given the
 * stuck reason "expiry_failed: ..." although it is Completed.
 */
let broken = false;
let planEntered = false;
const planGate = gate();
const reserve = defineAction({ name: 'ax-ho-reserve', run: async (i: { id: string }) => i });
const unreserve = defineAction({ name: 'ax-ho-unreserve', run: async (i: { id: string }) => i });
const fragile = defineFlow({
  name: 'ax-ho-fragile',
  version: 1,
  run: async (ctx, input: { id: string }) => {
    if (broken) {
      // The sweep's planning replay: a slow read of something that has gone.
      planEntered = true;
      await planGate.promise;
      throw new Error('pricing table is gone');
    }
    try {
      await ctx.action(reserve, input).compensateWith(unreserve, (o) => ({ id: o.id }));
      await ctx.awaitSignal('confirm', { timeoutSeconds: 3600 });
      return { confirmed: true };
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe(`adversarial expiry: a run that finishes while its expiry is being planned (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    planGate.open();
    await db.close();
  });

  it('is not counted, held off, journaled expiry_failed or marked stuck once it has finished', async () => {
    const clock = new TestClock();
    const e = bareEngine(db, { flows: [fragile], actions: [reserve, unreserve], clock });
    const { runId } = await e.startFlow(fragile, { id: 'a' }, { expiresInSeconds: 60 });
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    clock.advance(61_000);

    broken = true;
    const sweeping = e.sweepExpiredRuns();
    await waitFor("the sweep's planning replay to begin", async () => (planEntered ? true : undefined), 30_000);
    broken = false;

    // Meanwhile the run gets its confirmation and completes.
    await e.signal(runId, 'confirm');
    expect(await executeRun(e.runtime, runId)).toBe('finished');
    const finished = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(finished).toMatchObject({ status: 'Completed', stuck_reason: null });

    planGate.open();
    const swept = await sweeping;

    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const anomalies = await db.prisma.anomalyLog.findMany({ where: { run_id: runId, code: 'expiry_failed' } });
    expect({
      failed: swept.failed,
      status: run.status,
      stuck: run.stuck_reason,
      attempts: run.expiry_attempts,
      retryAt: run.expiry_retry_at,
      anomalies: anomalies.length,
    }).toEqual({ failed: [], status: 'Completed', stuck: null, attempts: 0, retryAt: null, anomalies: 0 });
  });
});
