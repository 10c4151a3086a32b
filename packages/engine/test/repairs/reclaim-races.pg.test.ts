import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/create-engine.ts';
import { defineAction, defineFlow } from '../../src/index.ts';
import { SimulatedCrash } from '../../src/runtime/runtime-deps.ts';
import { writePendingOutcome } from '../../src/runtime/steps/pending-outcome.ts';
import { beatWorker } from '../../src/store/beat-worker.ts';
import { claimStep } from '../../src/store/claim-step.ts';
import { enqueueJob } from '../../src/store/enqueue-job.ts';
import { stopWorker } from '../../src/store/stop-worker.ts';
import { seedStep } from '../support/seed-step.ts';
import { waitFor } from '../support/wait-for.ts';
import { lateTx, settle, useRaceEngines, who } from './support/race-engines.ts';

/** How many times a live worker ran the compensation, per run key: the dead worker's run is not counted. */
const undone = new Map<string, number>();
const charge = defineAction({ name: 'race-charge', run: async (i: { key: string }) => ({ charged: i.key }) });
const refund = defineAction({
  name: 'race-refund',
  run: async (i: { key: string }) => {
    undone.set(i.key, (undone.get(i.key) ?? 0) + 1);
    return { from: 'replacement' };
  },
});
/** Charges, then rolls the charge back: its one compensation is what the race is about. */
const refundFlow = defineFlow({
  name: 'race-refund-flow',
  version: 1,
  run: async (ctx, i: { key: string }) => {
    await ctx
      .action(charge, i)
      .compensateWith(refund, () => i)
      .run();
    await ctx.compensate();
    return 'rolled back';
  },
});

/**
 * run.reclaim_step racing a dead worker's late completion, of an action step and of a compensation
 * (issues 9 and its compensation reclaim, ADR 0031; support/race-engines.ts).
 */
describe("reclaim_step racing a dead worker's late completion (real PostgreSQL)", () => {
  const engines = useRaceEngines();

  it("reclaim_step racing the dead worker's late completion: exactly one wins, the audit row true (300 runs)", async () => {
    const { first, operator } = engines;
    const tally = { repair: 0, worker: 0 };
    for (let batch = 0; batch < 12; batch++) {
      // Each step claimed (attempts 1) by a worker whose row then says it stopped: gone, as far as
      // the engine can tell, yet its action finishes and reports late.
      const steps = await Promise.all(
        Array.from({ length: 25 }, async () => {
          const s = await seedStep(first);
          const workerId = `dead-${randomUUID()}`;
          await beatWorker(first.prisma, { workerId });
          const attempts = await claimStep(first.prisma, { table: 'action_runs', id: s.id, workerId, now: new Date() });
          expect(attempts).toBe(1);
          await stopWorker(first.prisma, { workerId });
          return s;
        }),
      );
      const raced = await Promise.all(
        steps.map(async (s, i) => {
          const repair = settle(
            operator.repairs.apply({
              kind: 'run.reclaim_step',
              target: { runId: s.runId, stepSequence: 1 },
              expected: { runStatus: 'Pending', stepStatus: 'Running', stepAttempts: 1 },
              ...who,
              idempotencyKey: randomUUID(),
            }),
          );
          // Vary who starts first (each order is asserted the same way below).
          if (i % 3 > 0) await sleep(i % 3);
          const late = first.prisma.$transaction(
            (tx) =>
              writePendingOutcome(
                tx,
                {
                  table: 'action_runs',
                  runId: s.runId,
                  rowId: s.id,
                  sequence: 1,
                  name: 'a',
                  attempts: 1,
                  output: { from: 'dead worker' },
                },
                new Date(),
              ),
            lateTx,
          );
          return { ...s, repair: await repair, late: await late };
        }),
      );
      for (const r of raced) {
        const step = await first.prisma.actionRun.findUniqueOrThrow({ where: { id: r.id } });
        const audit = await first.prisma.repairCommand.findMany({ where: { target_id: `${r.runId}#1` } });
        const reclaimed = await first.prisma.flowEvent.count({ where: { run_id: r.runId, type: 'step.reclaimed' } });
        const completed = await first.prisma.flowEvent.count({ where: { run_id: r.runId, type: 'action.completed' } });
        expect(audit).toHaveLength(1);
        expect([r.repair.ok, r.late === 'recorded'].filter(Boolean), 'exactly one wins').toHaveLength(1);
        if (r.repair.ok) {
          tally.repair++;
          expect(r.late, "the dead worker's late completion is rejected").toBe('rejected');
          expect(step).toMatchObject({ status: 'Pending', attempts: 1, claimed_by: null, output: null });
          expect(audit[0]).toMatchObject({ status: 'applied', id: r.repair.value.id });
          expect([reclaimed, completed]).toEqual([1, 0]);
        } else {
          tally.worker++;
          expect(r.repair.error).toMatchObject({ code: 'repair_conflict' });
          expect(step).toMatchObject({ status: 'Completed', attempts: 1, output: { from: 'dead worker' } });
          expect(audit[0]).toMatchObject({
            status: 'conflict',
            actual: { step: { status: 'Completed', attempts: 1 } },
          });
          expect([reclaimed, completed]).toEqual([0, 1]);
        }
      }
    }
    expect(tally.repair + tally.worker).toBe(300);
    console.info(`reclaim_step vs late completion: repair won ${tally.repair}, worker won ${tally.worker}`);
  });

  it("reclaim_step on a compensation racing the dead worker's late completion: one wins, the compensation done once (200 runs)", async () => {
    const { first, workers, operator } = engines;
    // This test's runs belong to its own engines: the shared worker pool does not know their flow.
    await workers.stopWorkers();
    const engine = (faults = {}) =>
      createEngine({
        db: first,
        flows: [refundFlow],
        actions: [charge, refund],
        faults,
        logger: pino({ level: 'silent' }),
        config: { worker: { concurrency: 25, poll_interval_ms: 10 }, logging: { anomaly_level: null } },
      });
    const replacement = engine();
    const tally = { repair: 0, worker: 0 };
    for (let batch = 0; batch < 8; batch++) {
      // A worker that dies right after claiming each compensation: the row stays Running, attempt 1.
      const doomed = engine({
        afterClaim: (step: { name: string }) => {
          if (step.name === 'race-refund') throw new SimulatedCrash('the worker died holding the compensation');
        },
      });
      doomed.startWorkers();
      const runs = await Promise.all(
        Array.from({ length: 25 }, async () => {
          const key = randomUUID();
          const { runId } = await doomed.startFlow(refundFlow, { key });
          return { key, runId };
        }),
      );
      const ids = runs.map((r) => r.runId);
      // Progress, not time: every compensation is claimed by the doomed worker.
      const rows = await waitFor('every compensation Running under the doomed worker', async () => {
        const found = await first.prisma.compensationRun.findMany({
          where: { run_id: { in: ids }, status: 'Running' },
        });
        return found.length === runs.length ? new Map(found.map((c) => [c.run_id, c])) : undefined;
      });
      await doomed.stopWorkers();
      const raced = await Promise.all(
        runs.map(async (r, i) => {
          const row = rows.get(r.runId)!;
          expect(row).toMatchObject({ attempts: 1, rollback_level: 1, ordinal: 0 });
          const repair = settle(
            operator.repairs.apply({
              kind: 'run.reclaim_step',
              target: { runId: r.runId, compensation: { rollbackLevel: 1, ordinal: 0 } },
              expected: { runStatus: 'Compensating', stepStatus: 'Running', stepAttempts: 1 },
              ...who,
              idempotencyKey: randomUUID(),
            }),
          );
          // Vary who starts first (each order is asserted the same way below).
          if (i % 3 > 0) await sleep(i % 3);
          const late = first.prisma.$transaction(
            (tx) =>
              writePendingOutcome(
                tx,
                {
                  table: 'compensation_runs',
                  runId: r.runId,
                  rowId: row.id,
                  sequence: row.action_sequence,
                  name: row.name,
                  attempts: 1,
                  level: 1,
                  output: { from: 'dead worker' },
                },
                new Date(),
              ),
            lateTx,
          );
          return { ...r, rowId: row.id, repair: await repair, late: await late };
        }),
      );
      // The dead worker's unacknowledged job comes back (its lease expired): each run is woken either way.
      for (const r of runs)
        await enqueueJob(first.prisma, { kind: 'wake-run', runId: r.runId, availableAt: new Date() });
      replacement.startWorkers();
      await waitFor('every raced run finished', async () => {
        const open = await first.prisma.flowRun.count({ where: { id: { in: ids }, finished_at: null } });
        return open === 0 ? true : undefined;
      });
      await replacement.stopWorkers();
      for (const r of raced) {
        const run = await first.prisma.flowRun.findUniqueOrThrow({ where: { id: r.runId } });
        const row = await first.prisma.compensationRun.findUniqueOrThrow({ where: { id: r.rowId } });
        const audit = await first.prisma.repairCommand.findMany({ where: { target_id: `${r.runId}#rollback-1.0` } });
        const events = await first.prisma.flowEvent.findMany({ where: { run_id: r.runId } });
        const count = (type: string) => events.filter((e) => e.type === type).length;
        expect(run).toMatchObject({ status: 'Completed', output: 'rolled back' });
        expect(audit).toHaveLength(1);
        expect([r.repair.ok, r.late === 'recorded'].filter(Boolean), 'exactly one wins').toHaveLength(1);
        expect(count('compensation.completed'), 'the compensation is recorded done exactly once').toBe(1);
        if (r.repair.ok) {
          tally.repair++;
          expect(r.late, "the dead worker's late completion is rejected").toBe('rejected');
          expect(row).toMatchObject({ status: 'Completed', attempts: 2, output: { from: 'replacement' } });
          expect(undone.get(r.key), 'the replacement ran the compensation once').toBe(1);
          expect(audit[0]).toMatchObject({ status: 'applied', id: r.repair.value.id });
          expect(count('step.reclaimed')).toBe(1);
        } else {
          tally.worker++;
          expect(r.repair.error).toMatchObject({ code: 'repair_conflict', field: 'expected.stepStatus' });
          expect(row).toMatchObject({ status: 'Completed', attempts: 1, output: { from: 'dead worker' } });
          expect(undone.get(r.key), 'nobody ran the compensation again').toBeUndefined();
          expect(audit[0]).toMatchObject({
            status: 'conflict',
            actual: { step: { kind: 'compensation', status: 'Completed', attempts: 1 } },
          });
          expect(count('step.reclaimed')).toBe(0);
        }
      }
    }
    expect(tally.repair + tally.worker).toBe(200);
    console.info(
      `reclaim_step (compensation) vs late completion: repair won ${tally.repair}, worker won ${tally.worker}`,
    );
  });
});
