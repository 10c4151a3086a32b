import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { bareEngine, within } from '../harness.ts';

/**
 * Seed 000 / ADR 0007: a run whose rollback cannot be planned must not hold up the sweep ("Nothing
 * else in the sweep is held up by it ... the runs behind it are reached"). planRollback
 * (plan-rollback.ts) races the flow's promise against the session's park with no bound: a flow whose
 * code, on replay, awaits something that never answers (a hung HTTP call, a lookup on a dead
 * connection) never settles either, so sweepExpiredRuns (and the monitor pass holding the lease)
 * waits forever and no other overdue run is ever expired.
 */
let hang = false;
const reserve = defineAction({ name: 'ax-ph-reserve', run: async (i: { id: string }) => i });
const unreserve = defineAction({ name: 'ax-ph-unreserve', run: async (i: { id: string }) => i });
const hangs = defineFlow({
  name: 'ax-ph-hangs',
  version: 1,
  run: async (ctx, input: { id: string }) => {
    if (hang) await new Promise<void>(() => undefined); // the lookup never answers
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
const healthy = defineFlow({
  name: 'ax-ph-healthy',
  version: 1,
  run: async (ctx, input: { id: string }) => {
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

describe(`adversarial expiry: a planning replay that never settles (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('does not hold up the sweep: the overdue runs behind it are expired', async () => {
    const clock = new TestClock();
    const e = bareEngine(db, {
      flows: [hangs, healthy],
      actions: [reserve, unreserve],
      clock,
      config: { monitor: { expiration: { plan_timeout_ms: 300 } } },
    });
    const bad = await e.startFlow(hangs, { id: 'bad' }, { expiresInSeconds: 10 });
    const good = await e.startFlow(healthy, { id: 'good' }, { expiresInSeconds: 20 });
    expect(await executeRun(e.runtime, bad.runId)).toBe('parked');
    expect(await executeRun(e.runtime, good.runId)).toBe('parked');
    clock.advance(21_000);
    hang = true;

    const swept = await within(e.sweepExpiredRuns({ pageSize: 1 }), 10_000);
    const goodRow = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: good.runId } });
    expect({ sweepReturned: swept !== 'timeout', goodExpired: goodRow.expired_at !== null }).toEqual({
      sweepReturned: true,
      goodExpired: true,
    });
  });
});
