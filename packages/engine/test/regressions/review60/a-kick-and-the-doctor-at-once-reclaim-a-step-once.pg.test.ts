import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { holdRowsOf, type HeldStepRows } from './support/hold-step-rows.ts';

/**
 * Review 60 (ADR 0010: a step Running under a worker that is gone is reclaimed by the kick, by
 * engine.reclaimStep and by the doctor's R4; reclaim-step.ts: "two wakes of one run start two replays
 * that race for the reopened row, and the loser journals a claim_lost for nothing"; ADR 0134 §1: the
 * doctor now takes the run FOR KEY SHARE SKIP LOCKED and waits for any other row at most 1 s).
 *
 * Attacked: an operator kicks a run whose step's worker is gone while the doctor (one pass,
 * `engine.sweepDoctor()`, or the monitor loop on another replica) reclaims the same step. Both take the
 * run's row FOR KEY SHARE, which do not exclude each other; both then update the step's row. The test
 * makes them meet on that row (another session holds it for a moment, until both wait on it), then lets
 * go. Is the step reclaimed once, with one wake, or twice?
 */
const config = {
  worker: { poll_interval_ms: 25, heartbeat_interval_ms: 100, dead_after_seconds: 5 },
  logging: { anomaly_level: null },
} as const;

describe('review 60: a kick and the doctor reclaiming one orphaned step at once (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let held: HeldStepRows | undefined;
  const engines: Engine[] = [];
  let openGate: () => void = () => undefined;
  const gate = new Promise<void>((r) => (openGate = r));
  const stuck = defineAction({
    name: 'r60-kick-doctor-step',
    run: async () => {
      await gate;
      return null;
    },
  });
  const flow = defineFlow({
    name: 'r60-kick-doctor',
    version: 1,
    run: async (ctx) => ctx.action(stuck, null).run(),
  });
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    openGate();
    for (const e of engines) await e.stopWorkers(2_000).catch(() => undefined);
    await db?.close();
  });

  /** One orphaned step; `first` and `second` (each on an engine of its own) meet on its row. */
  async function race(
    first: (e: Engine, runId: string) => Promise<unknown>,
    second: (e: Engine, runId: string) => Promise<unknown>,
  ) {
    const make = () => {
      const e = createEngine({ db, flows: [flow], actions: [stuck], config, logger: pino({ level: 'silent' }) });
      engines.push(e);
      return e;
    };
    const a = make();
    a.startWorkers();
    const { runId } = await a.startFlow(flow, null);
    const step = await waitFor(
      'the step to run',
      async () => (await db.prisma.actionRun.findFirst({ where: { run_id: runId, status: 'Running' } })) ?? undefined,
    );
    expect(await a.stopWorkers(100)).toEqual({ drained: false });
    await db.prisma.$executeRaw`update "sagaflow"."workers" set heartbeat_at = now() - interval '1 minute'`;
    const jobsBefore = await db.prisma.job.count({ where: { run_id: runId } });

    // The two meet on the step's row: held until both wait on it (well within the doctor's 1 s).
    held = await holdRowsOf(db.url!, 'action_runs', [step.id]);
    const one = make();
    const two = make();
    const kick = first(one, runId).then(
      (r) => JSON.stringify(r),
      (e: unknown) => `threw ${(e as { code?: string }).code ?? String(e)}`,
    );
    let secondSettled = false;
    const pass = second(two, runId).then(
      (r) => JSON.stringify(r),
      (e: unknown) => `threw ${(e as { code?: string }).code ?? String(e)}`,
    );
    void pass.finally(() => (secondSettled = true));
    // The first waits on the holder, the second on the first (the row's tuple lock), or (fixed: both take the
    // run's row no key update, the doctor without waiting for it and a step for at most 1 s) the second has
    // passed the run over and ended.
    await waitFor('the kick and the doctor to wait on the step, or the doctor to pass the run over', async () => {
      const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock'`;
      return (row?.n ?? 0) >= 2 || secondSettled ? true : undefined;
    });
    await held.rollback();
    held = undefined;
    const answers = [await kick, await pass];
    // A doctor that passed the held run over reclaims it at its next pass; one that already reclaimed, or a
    // kick that did, leaves nothing for it.
    answers.push(JSON.stringify(await one.sweepDoctor()));

    const reclaimed = await db.prisma.flowEvent.findMany({
      where: { run_id: runId, type: 'step.reclaimed' },
      select: { data: true },
    });
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const wakes = (await db.prisma.job.count({ where: { run_id: runId } })) - jobsBefore;
    return {
      seen: { reclaimedBy: reclaimed.map((e) => (e.data as { by: string }).by).sort(), wakes },
      why: `answers: ${JSON.stringify(answers)}; repair_count ${run.repair_count}`,
    };
  }

  it('the step is reclaimed once: one step.reclaimed and one wake', async () => {
    const { seen, why } = await race(
      (e, runId) => e.kick(runId),
      (e) => e.sweepDoctor(),
    );
    expect(seen, why).toEqual({ reclaimedBy: [expect.any(String)], wakes: 1 });
  }, 40_000);

  it('two doctor passes at once (the monitor loop on one replica, sweepDoctor on another) reclaim the step once', async () => {
    const { seen, why } = await race(
      (e) => e.sweepDoctor(),
      (e) => e.sweepDoctor(),
    );
    expect(seen, why).toEqual({ reclaimedBy: ['doctor'], wakes: 1 });
  }, 40_000);
});
