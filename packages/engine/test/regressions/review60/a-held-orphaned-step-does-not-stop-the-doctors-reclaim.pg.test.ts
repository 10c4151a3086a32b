import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { holdRowsOf, type HeldStepRows } from './support/hold-step-rows.ts';

/**
 * Review 60 (ADR 0134 §1: "Each of its per-run transactions (expiry and its hold-off, owner_gone, a stuck
 * reason's change, the doctor's reclaim) takes the run's row with skip locked … and waits for any other
 * row at most 1 s. A held run is logged and left to the next pass, and the sweep goes on to its next
 * run"; ADR 0010 R4: a step Running under a worker that is gone is reclaimed by the doctor).
 *
 * The doctor's R4 reclaims every orphaned step of the pass in ONE transaction (sweep-doctor.ts
 * `reclaimOrphans`), stalest first. Attacked: two runs whose steps were left Running by a worker that is
 * gone; another session holds the row of one of them (an operator's psql `select … for update` on the
 * stuck step, or the open transaction of a process frozen mid-write). Is the other run's step still
 * reclaimed by the doctor, and does the monitor pass go on, or does one held step stop R4 for every run?
 */
const config = {
  worker: { poll_interval_ms: 25, heartbeat_interval_ms: 100, dead_after_seconds: 5 },
  logging: { anomaly_level: null },
} as const;

describe('review 60: the doctor reclaims orphaned steps while one of them is held (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let held: HeldStepRows | undefined;
  const engines: Engine[] = [];
  let openGate: () => void = () => undefined;
  const gate = new Promise<void>((r) => (openGate = r));
  const stuck = defineAction({
    name: 'r60-orphan-step',
    run: async () => {
      await gate;
      return null;
    },
  });
  const flow = defineFlow({ name: 'r60-orphan', version: 1, run: async (ctx) => ctx.action(stuck, null).run() });
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    openGate();
    for (const e of engines) await e.stopWorkers(2_000).catch(() => undefined);
    await db?.close();
  });

  /** Two runs whose steps a gone worker left Running; `hold` holds a row of the first; two monitor passes. */
  async function attack(hold: (first: { runId: string; stepId: string }) => Promise<HeldStepRows>) {
    const make = () => {
      const e = createEngine({ db, flows: [flow], actions: [stuck], config, logger: pino({ level: 'silent' }) });
      engines.push(e);
      return e;
    };
    // Worker A runs both steps and goes away without draining: its beats stop, both steps stay Running.
    const a = make();
    a.startWorkers();
    const first = await a.startFlow(flow, null);
    const second = await a.startFlow(flow, null);
    const steps = await waitFor('both steps to run', async () => {
      const rows = await db.prisma.actionRun.findMany({
        where: { run_id: { in: [first.runId, second.runId] }, status: 'Running' },
      });
      return rows.length === 2 ? rows : undefined;
    });
    expect(await a.stopWorkers(100)).toEqual({ drained: false });
    // Its last beat a minute ago (the database clock, which the monitor judges by): gone.
    await db.prisma.$executeRaw`update "sagaflow"."workers" set heartbeat_at = now() - interval '1 minute'`;

    const heldStep = steps.find((s) => s.run_id === first.runId)!;
    const freeStep = steps.find((s) => s.run_id === second.runId)!;
    held = await hold({ runId: first.runId, stepId: heldStep.id });

    const b = make();
    // Two passes while the step is held: the monitor loop runs one each interval.
    const passes: string[] = [];
    const started = Date.now();
    for (let i = 0; i < 2; i++)
      passes.push(
        await b.monitorPass({ doctor: true }).then(
          (p) => (p.swept ? 'swept' : `not swept: ${p.reason}`),
          (e: unknown) =>
            `threw ${(e as { code?: string }).code ?? ''} ${String((e as Error).message)
              .replace(/\s+/g, ' ')
              .slice(-140)}`,
        ),
      );
    const ms = Date.now() - started;
    const reclaimed = await db.prisma.flowEvent.findMany({
      where: { run_id: { in: [first.runId, second.runId] }, type: 'step.reclaimed' },
      select: { run_id: true },
    });
    const free = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: freeStep.id } });

    // The control: once the row is let go, a pass reclaims both (the setup can be reclaimed).
    await held.rollback();
    held = undefined;
    await b.monitorPass({ doctor: true });
    const afterLetGo = await db.prisma.flowEvent.count({
      where: { run_id: { in: [first.runId, second.runId] }, type: 'step.reclaimed' },
    });
    expect(afterLetGo).toBe(2);

    return {
      summary: {
        passes,
        freeStepReclaimed: reclaimed.some((r) => r.run_id === second.runId),
        freeStepReclaimableAt: free.reclaim_stale_at === null ? 'none' : 'set',
      },
      ms,
    };
  }

  const expected = { passes: ['swept', 'swept'], freeStepReclaimed: true, freeStepReclaimableAt: 'set' };

  it('a monitor pass with the doctor reclaims the free orphaned step and passes over the held one', async () => {
    // Another session holds the first run's stuck step (psql `select … for update`, a frozen writer).
    const { summary, ms } = await attack(({ stepId }) => holdRowsOf(db.url!, 'action_runs', [stepId]));
    expect(summary, `the two passes took ${ms} ms`).toEqual(expected);
  }, 40_000);

  it('a monitor pass with the doctor reclaims the free orphaned step while another run is held for no key update', async () => {
    // Another session holds the first run's row FOR NO KEY UPDATE (the lock an UPDATE of the row takes:
    // psql `update sagaflow.flow_runs … where id = …` left open). At review 60 the doctor took the run FOR
    // KEY SHARE SKIP LOCKED, which that lock does not conflict with, so the run was not passed over; now
    // it takes it FOR NO KEY UPDATE within the sweep's allowance (ADR 0135), and passes it over after it.
    const { summary, ms } = await attack(({ runId }) => holdRowsOf(db.url!, 'flow_runs', [runId], 'no key update'));
    expect(summary, `the two passes took ${ms} ms`).toEqual(expected);
  }, 40_000);
});
