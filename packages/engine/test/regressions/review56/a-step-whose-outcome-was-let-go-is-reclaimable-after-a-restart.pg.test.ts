import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate, keptLogger } from '../review53/support/liveness.ts';

/**
 * Review 56 (review 55's leftover on ADR 0129, with ADR 0010's second addendum). A step whose outcome
 * the database would not take is held in memory; at `stopWorkers` the engine lets it go, saying "their
 * steps will show as held by a worker that is gone: reclaim them (engine.reclaimStep) to run them
 * again" (held-outcomes.ts). The step stays Running under this engine's worker id. If the host then
 * starts the same engine's workers again (same worker id), that id beats again: is the step still
 * "held by a worker that is gone", reclaimable as the log says, or shown as stuck?
 *
 * The outcome write is refused by the real database: a test-only trigger on `action_runs` raises
 * SQLSTATE 08006 (connection failure) for the step's completion until the test drops it.
 */
const config = {
  worker: {
    poll_interval_ms: 25,
    heartbeat_interval_ms: 100,
    dead_after_seconds: 1,
    outcome_retry: { max_attempts: 2, base_delay_ms: 10, max_delay_ms: 20 },
  },
  logging: { anomaly_level: null },
} as const;

describe('review 56: a step whose held outcome was let go at a stop, after the same engine restarts (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  const engines: Engine[] = [];
  afterAll(async () => {
    await db?.pool
      ?.query(`drop trigger if exists r56_refuse on "sagaflow"."action_runs"; drop function if exists r56_refuse()`)
      .catch(() => undefined);
    for (const e of engines) await e.stopWorkers(2_000).catch(() => undefined);
    await db?.close();
  });

  it('the step can be reclaimed (or is shown stuck) once the engine that let it go runs workers again', async () => {
    db = await openTestDatabase({ poolSize: 8 });
    const kept = keptLogger();
    const go = gate();
    let entries = 0;
    const charge = defineAction({
      name: 'r56-let-go-charge',
      run: async () => {
        entries += 1;
        if (entries === 1) await go.opened;
        return 'charged';
      },
    });
    const flow = defineFlow({ name: 'r56-let-go', version: 1, run: async (ctx) => ctx.action(charge, null) });
    const a = createEngine({
      db,
      flows: [flow],
      actions: [charge],
      config,
      logger: pino({ level: 'warn' }, kept.stream),
    });
    const b = createEngine({ db, flows: [flow], actions: [charge], config, logger: pino({ level: 'silent' }) });
    engines.push(a, b);

    a.startWorkers();
    const { runId } = await a.startFlow(flow, null);
    const step = await waitFor('the step to run under A', async () => {
      const s = await db.prisma.actionRun.findFirst({ where: { run_id: runId, name: 'r56-let-go-charge' } });
      return s?.status === 'Running' && entries === 1 ? s : undefined;
    });
    // The database refuses the step's completion from now on.
    await db.pool!.query(`
      create function r56_refuse() returns trigger language plpgsql as $$
      begin raise exception 'r56: the database is away' using errcode = '08006'; end $$;
      create trigger r56_refuse before update on "sagaflow"."action_runs"
        for each row when (new.status = 'Completed') execute function r56_refuse();`);
    go.open();
    await waitFor('A to hold the outcome in memory', async () =>
      kept.count(/keeps them in memory/) > 0 ? true : undefined,
    );
    // The host stops A's workers: the held outcome is let go, and the step stays Running under A.
    await a.stopWorkers(2_000);
    expect(kept.count(/stopped holding step outcomes/)).toBe(1);
    await db.pool!.query(`drop trigger r56_refuse on "sagaflow"."action_runs"; drop function r56_refuse()`);
    const left = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: step.id } });
    expect({ status: left.status, claimedBy: left.claimed_by }).toEqual({
      status: 'Running',
      claimedBy: a.runtime.workerId,
    });

    // The same engine runs workers again; its first beat lands.
    a.startWorkers();
    await waitFor("A's restarted pool to beat", async () => {
      const w = await db.prisma.worker.findUnique({ where: { id: a.runtime.workerId } });
      return w && w.stopped_at === null ? w : undefined;
    });
    // Past dead_after_seconds: were the worker gone, the step would be judged so by now.
    await new Promise((r) => setTimeout(r, (config.worker.dead_after_seconds + 1) * 1000));
    const reclaim = await b.reclaimStep(runId, { stepId: step.id }).then(
      (r) => r,
      (e: unknown) => ({ threw: (e as { code?: string }).code ?? String(e), message: (e as Error).message }),
    );
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const said = JSON.stringify({
      reclaim,
      run: { status: run.status, stuck: run.stuck_reason, waiting: run.waiting_for },
    });
    // What the let-go log promised: the step is reclaimable, or at least the run says it is stuck.
    expect(
      ('reclaimed' in reclaim && reclaim.reclaimed) || run.stuck_reason !== null,
      `nothing runs the step (no process holds it) and A beats under the id it is claimed by: ${said}`,
    ).toBe(true);
  }, 90_000);
});
