import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 58 (ADR 0010 §4: "The monitor pass gives its run `owner_gone: …` and `run.stuck`"; ADR 0131).
 * What D1's hang costs on a deployment of replicas: a step whose worker is gone is judged by the
 * monitor's orphan sweep, which runs after the run sweep in the same pass, under the `monitor` lease.
 * Two replicas run the monitor loop (interval 1 s, lease 10 s). One overdue run is held by another
 * session. Attacked: is the step of a gone worker still judged `owner_gone` (the reason and the repair
 * the console offers), by either replica, within a bound well past the lease?
 */
const config = {
  worker: { poll_interval_ms: 25, heartbeat_interval_ms: 100, dead_after_seconds: 1 },
  logging: { anomaly_level: null },
} as const;
const BOUND_MS = 16_000;

describe('review 58: owner_gone while an overdue run is held (real PostgreSQL, two monitors)', () => {
  let db: Database & { url?: string };
  let held: HeldRows | undefined;
  const engines: Engine[] = [];
  let openGate: () => void = () => undefined;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 10 });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    openGate();
    for (const e of engines) {
      await e.stopMonitor().catch(() => undefined);
      await e.stopWorkers(2_000).catch(() => undefined);
    }
    await db?.close();
  });

  it('a step whose worker is gone is judged owner_gone by a monitor while another run is held', async () => {
    const gate = new Promise<void>((r) => (openGate = r));
    const stuck = defineAction({
      name: 'r58-gone-step',
      run: async () => {
        await gate;
        return null;
      },
    });
    const flow = defineFlow({ name: 'r58-gone', version: 1, run: async (ctx) => ctx.action(stuck, null).run() });
    const make = () => {
      const e = createEngine({
        db,
        flows: [waiter, flow],
        actions: [...actions, stuck],
        config,
        logger: pino({ level: 'silent' }),
      });
      engines.push(e);
      return e;
    };
    const w = make();
    w.startWorkers();
    // An overdue run (deadline 1 s), parked on its hour-long signal wait.
    const overdue = await w.startFlow(waiter, null, { expiresInSeconds: 1 });
    await waitFor('the overdue run to park', async () =>
      (await w.getRun(overdue.runId))?.run.status === 'Waiting' ? true : undefined,
    );
    // A step whose worker goes away: its pool stops without draining (the step still runs), so it stops
    // beating and, past dead_after_seconds, is gone.
    const orphan = await w.startFlow(flow, null);
    await waitFor('the step to run', async () =>
      (await db.prisma.actionRun.count({ where: { run_id: orphan.runId, status: 'Running' } })) > 0 ? true : undefined,
    );
    expect(await w.stopWorkers(100)).toEqual({ drained: false });
    await new Promise((r) => setTimeout(r, 1_500));

    held = await holdRuns(db.url!, [overdue.runId]);
    const a = make();
    const b = make();
    a.startMonitor({ intervalMs: 1_000 });
    b.startMonitor({ intervalMs: 1_000 });

    const judged = await waitFor(
      'owner_gone',
      async () => {
        const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: orphan.runId } });
        return r.stuck_reason?.startsWith('owner_gone') ? r.stuck_reason : undefined;
      },
      BOUND_MS,
      200,
    ).catch(() => null);
    const waiting = await db.prisma.$queryRaw<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock' and ${held.pid}::int = any(pg_blocking_pids(pid))`;
    const lease = await db.prisma.lease.findUnique({ where: { name: 'monitor' } });
    // The control: once the overdue run is let go, the monitors judge the step (the setup can be judged).
    await held.rollback();
    held = undefined;
    const afterLetGo = await waitFor(
      'owner_gone once the overdue run is let go',
      async () => {
        const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: orphan.runId } });
        return r.stuck_reason?.startsWith('owner_gone') ? r.stuck_reason : undefined;
      },
      20_000,
      200,
    );
    expect(afterLetGo).toMatch(/^owner_gone: step 1 \(r58-gone-step\) held by worker /);
    expect(
      { judged: judged === null ? 'not judged' : 'owner_gone' },
      `after ${BOUND_MS} ms: ${waiting[0]?.n} backend(s) wait on the session holding the overdue run; ` +
        `monitor lease ${lease?.holder} until ${lease?.expires_at?.toISOString()}`,
    ).toEqual({ judged: 'owner_gone' });
  }, 60_000);
});
