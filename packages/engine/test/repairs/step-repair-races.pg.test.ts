import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Engine } from '../../src/create-engine.ts';
import type { RepairCommand } from '../../src/index.ts';
import { seedStep } from '../support/seed-step.ts';
import { waitFor } from '../support/wait-for.ts';
import { gates, gatedFlow, settle, useRaceEngines, who } from './support/race-engines.ts';

/**
 * Repairs of a step racing the worker that holds it, another operator, or the same command sent
 * twice (issue 9; the shared setup and its rules: support/race-engines.ts).
 */
describe('step repairs racing the engine and each other (real PostgreSQL)', () => {
  const engines = useRaceEngines();

  it('complete_step racing the worker that holds the step: one outcome, the other refused, the audit row true (200 runs)', async () => {
    const { first, workers, operator } = engines;
    workers.startWorkers();
    const tally = { repair: 0, worker: 0 };
    for (let batch = 0; batch < 10; batch++) {
      const runs = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const key = randomUUID();
          const { runId } = await workers.startFlow(gatedFlow, { key });
          return { key, runId };
        }),
      );
      // Progress, not time: every step is claimed and its action is waiting at its gate.
      await waitFor('all steps Running at their gate', async () =>
        runs.every((r) => gates.has(r.key)) ? true : undefined,
      );
      const results = await Promise.all(
        runs.map(async (r, i) => {
          const cmd = {
            kind: 'run.complete_step',
            target: { runId: r.runId, stepSequence: 1 },
            expected: { runStatus: 'Running', stepStatus: 'Running', stepAttempts: 1 },
            output: { from: 'operator' },
            ...who,
            idempotencyKey: randomUUID(),
          } as RepairCommand;
          const repair = settle(operator.repairs.apply(cmd));
          // Vary who starts first (correctness never depends on it: each order is asserted below).
          if (i % 3 > 0) await sleep(i % 3);
          gates.get(r.key)!();
          return { ...r, repair: await repair };
        }),
      );
      await waitFor('every raced run finished', async () => {
        const open = await first.prisma.flowRun.count({
          where: { id: { in: runs.map((r) => r.runId) }, finished_at: null },
        });
        return open === 0 ? true : undefined;
      });
      for (const r of results) {
        const run = await first.prisma.flowRun.findUniqueOrThrow({ where: { id: r.runId } });
        const audit = await first.prisma.repairCommand.findMany({ where: { target_id: `${r.runId}#1` } });
        const rejected = await first.prisma.anomalyLog.count({ where: { run_id: r.runId, code: 'outcome_rejected' } });
        expect(run.status).toBe('Completed');
        expect(audit).toHaveLength(1);
        if (r.repair.ok) {
          tally.repair++;
          expect(run.output, 'the repair won: its output is recorded').toEqual({ from: 'operator' });
          expect(audit[0]).toMatchObject({ status: 'applied', id: r.repair.value.id });
          // The worker's outcome is journaled, never recorded: rejected by the fence while the run is
          // open, refused once the repair's wake finished the run (ADR 0011). Its journal row follows
          // the worker's own transaction, which can come after the run finished: wait for it.
          const journaled = await waitFor("the worker's outcome to be journaled", async () => {
            const n = await first.prisma.anomalyLog.count({
              where: { run_id: r.runId, code: { in: ['outcome_rejected', 'write_refused'] } },
            });
            return n > 0 ? n : undefined;
          });
          expect(journaled, "the worker's outcome was rejected or refused, and journaled once").toBe(1);
        } else {
          tally.worker++;
          expect(r.repair.error).toMatchObject({ code: 'repair_conflict' });
          expect(run.output, 'the worker won: its output is recorded').toEqual({ from: 'worker' });
          expect(audit[0]).toMatchObject({ status: 'conflict', actual: { step: { status: 'Completed' } } });
          expect(rejected).toBe(0);
        }
      }
      for (const r of runs) gates.delete(r.key);
    }
    expect(tally.repair + tally.worker).toBe(200);
    console.info(`complete_step vs worker: repair won ${tally.repair}, worker won ${tally.worker}`);
  });

  it('two operators repairing one step at once: one applied, the other repair_conflict (150 runs)', async () => {
    const { first, workers, operator } = engines;
    for (let batch = 0; batch < 6; batch++) {
      const steps = await Promise.all(Array.from({ length: 25 }, () => seedStep(first)));
      const raced = await Promise.all(
        steps.map(async (s) => {
          const cmd = (engine: Engine, n: number) =>
            settle(
              engine.repairs.apply({
                kind: 'run.complete_step',
                target: { runId: s.runId, stepSequence: 1 },
                expected: { runStatus: 'Pending', stepStatus: 'Pending', stepAttempts: 0 },
                output: { operator: n },
                ...who,
                actor: `operator-${n}`,
                idempotencyKey: randomUUID(),
              }),
            );
          const [a, b] = await Promise.all([cmd(operator, 1), cmd(workers, 2)]);
          return { ...s, a, b };
        }),
      );
      for (const r of raced) {
        expect([r.a.ok, r.b.ok].filter(Boolean), 'exactly one operator wins').toHaveLength(1);
        const winner = r.a.ok ? 1 : 2;
        const loser = r.a.ok ? r.b : r.a;
        expect(loser.ok ? null : loser.error).toMatchObject({ code: 'repair_conflict' });
        const step = await first.prisma.actionRun.findUniqueOrThrow({ where: { id: r.id } });
        expect(step).toMatchObject({ status: 'Completed', attempts: 1, output: { operator: winner } });
        const audit = await first.prisma.repairCommand.findMany({
          where: { target_id: `${r.runId}#1` },
          orderBy: { status: 'asc' },
        });
        expect(audit.map((x) => [x.status, x.actor])).toEqual([
          ['applied', `operator-${winner}`],
          ['conflict', `operator-${3 - winner}`],
        ]);
        expect(audit[1]?.actual).toMatchObject({ step: { status: 'Completed', attempts: 1 } });
        const events = await first.prisma.flowEvent.count({ where: { run_id: r.runId, type: 'repair.applied' } });
        expect(events).toBe(1);
      }
    }
  });

  it('one idempotency key sent twice at once has one effect, and both calls get its result (100 runs)', async () => {
    const { first, workers, operator } = engines;
    // Seeded ten at a time: a hundred at once queued for the test's own pool of 12 past its 5 s on a loaded
    // machine (CI), before anything under test ran.
    const steps: Awaited<ReturnType<typeof seedStep>>[] = [];
    while (steps.length < 100) steps.push(...(await Promise.all(Array.from({ length: 10 }, () => seedStep(first)))));
    await Promise.all(
      steps.map(async (s) => {
        const cmd = {
          kind: 'run.terminate',
          target: { runId: s.runId },
          expected: { runStatus: 'Pending' },
          ...who,
          idempotencyKey: `twice-${s.runId}`,
        } as RepairCommand;
        const [a, b] = await Promise.all([operator.repairs.apply(cmd), workers.repairs.apply(cmd)]);
        expect(a.id).toBe(b.id);
        expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
      }),
    );
    // Counted once every pair has answered, in two statements: 200 counts sent beside the repairs
    // outwaited the pool's 5 s for a connection on a loaded machine (the repairs were fine).
    const runIds = steps.map((s) => s.runId);
    const commands = await first.prisma.repairCommand.groupBy({
      by: ['idempotency_key'],
      where: { idempotency_key: { in: runIds.map((id) => `twice-${id}`) } },
      _count: { _all: true },
    });
    const terminated = await first.prisma.flowEvent.groupBy({
      by: ['run_id'],
      where: { run_id: { in: runIds }, type: 'run.terminated' },
      _count: { _all: true },
    });
    expect(commands.map((c) => c._count._all)).toEqual(runIds.map(() => 1));
    expect(terminated.map((t) => t._count._all)).toEqual(runIds.map(() => 1));
  });
});
