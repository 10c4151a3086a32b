import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, type MonitorPass } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
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
    // "At once" by progress, not by luck: a second connection locks action_runs, so the first pass
    // takes the lease and then waits in its first sweep; the second pass starts only once it waits.
    // (Two passes merely started together may run one after the other on a loaded machine, and
    // then each takes the lease in turn and sweeps, as it should.)
    const holder = await db.pool!.connect();
    let first: Promise<MonitorPass> | undefined;
    try {
      await holder.query('begin');
      await holder.query('lock table "sagaflow"."action_runs" in access exclusive mode');
      const holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      first = a.monitorPass();
      first.catch(() => undefined);
      await waitFor('the first pass waiting in its sweep, with the lease', async () => {
        const rows = await db.prisma.$queryRaw<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock' and pid <> ${holderPid}
             and query ilike '%action_runs%'`;
        return rows[0]!.n > 0 ? true : undefined;
      });
      const second = await b.monitorPass();
      expect(second.swept).toBe(false);
      expect(second.swept ? '' : second.reason).toMatch(/another replica holds the monitor lease/);
    } finally {
      await holder.query('rollback').catch(() => undefined);
      holder.release();
    }
    expect((await first).swept).toBe(true);
    // The first released the lease at its end: a pass now takes it and sweeps.
    expect((await b.monitorPass()).swept).toBe(true);
  });
});
