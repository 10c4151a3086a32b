import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { bareEngine } from '../harness.ts';

/** Two sweepers on real connections: a run is expired once, and the monitor lease lets one pass sweep. */
const reserve = defineAction({ name: 'ax-cs-reserve', run: async (i: { id: string }) => i });
const unreserve = defineAction({ name: 'ax-cs-unreserve', run: async (i: { id: string }) => i });
const flow = defineFlow({
  name: 'ax-cs-flow',
  version: 1,
  run: async (ctx, input: { id: string }) => {
    try {
      await ctx.action(reserve, input).compensateWith(unreserve, (o) => ({ id: o.id }));
      await ctx.awaitSignal('confirm', { timeoutSeconds: 3600 });
      return { ok: true };
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe('adversarial expiry: concurrent sweeps (postgres)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 10 });
  });
  afterAll(async () => {
    await db.close();
  });

  it('two sweeps racing over the same page expire each run exactly once', async () => {
    const clock = new TestClock();
    const a = bareEngine(db, { flows: [flow], actions: [reserve, unreserve], clock });
    const b = bareEngine(db, { flows: [flow], actions: [reserve, unreserve], clock });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const { runId } = await a.startFlow(flow, { id: `r${i}` }, { expiresInSeconds: 60 });
      expect(await executeRun(a.runtime, runId)).toBe('parked');
      ids.push(runId);
    }
    clock.advance(61_000);
    const [ra, rb] = await Promise.all([a.sweepExpiredRuns({ pageSize: 3 }), b.sweepExpiredRuns({ pageSize: 3 })]);
    const all = [...ra.expired, ...rb.expired].sort();
    expect(all).toEqual([...ids].sort());
    for (const runId of ids) {
      const started = await db.prisma.flowEvent.count({ where: { run_id: runId, type: 'run.expiry_started' } });
      expect(started).toBe(1);
      for (let i = 0; i < 3; i++) await executeRun(a.runtime, runId);
      const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      expect(run.status).toBe('Expired');
      expect(await db.prisma.compensationRun.count({ where: { run_id: runId, status: 'Completed' } })).toBe(1);
    }
  });

  it('two monitor passes at once: one holds the lease and sweeps, the other sweeps nothing', async () => {
    const clock = new TestClock();
    const a = bareEngine(db, { flows: [flow], actions: [reserve, unreserve], clock });
    const b = bareEngine(db, { flows: [flow], actions: [reserve, unreserve], clock });
    const [pa, pb] = await Promise.all([a.monitorPass(), b.monitorPass()]);
    expect([pa.swept, pb.swept].sort()).toEqual([false, true]);
  });
});
