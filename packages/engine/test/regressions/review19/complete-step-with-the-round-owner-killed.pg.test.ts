import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RepairCommand } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { childWorkerSuite } from '../../support/spawn-worker.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine } from '../harness.ts';
import { applyRepairNow } from './apply-repair-now.ts';
import { roundOutConfig, roundOutFlow } from './support/round-out-flow.ts';

const workerScript = fileURLToPath(new URL('./support/round-out-worker.ts', import.meta.url));
const WAIT_MS = 60_000;

/**
 * Review 19. run.complete_step on a branch of a parallel round whose owner, a real worker process,
 * was SIGKILLed with both branches claimed (its heartbeat then ends: its lease is let lapse here by
 * ageing its `workers` row, instead of waiting for the clock). The operator completes branch 1; the
 * repair's wake replays the run here (B), which finds branch 2 held by a gone worker: stuck with
 * owner_gone, and the safe repair (reclaim_step) runs it again.
 *
 * Guarantees: the operator's value is what the history keeps; branch 2 is run once more under a new
 * attempt; one outcome event per step, nothing after the terminal event, the run ends once; both
 * audit rows applied.
 */
describe('complete_step with the round owner SIGKILLed (real PostgreSQL, real process)', () => {
  const suite = childWorkerSuite();

  it("the operator's value stands, the dead owner's other branch is stuck with owner_gone, reclaimed, and the run ends once", async () => {
    const { db } = suite;
    const child = await suite.spawn(workerScript);
    const ran: string[] = [];
    const { flow, actions } = roundOutFlow(async (name) => (ran.push(name), `here-${name}`));
    const e = bareEngine(db, { flows: [flow], actions, config: roundOutConfig });
    const { runId } = await e.startFlow(flow, null);
    await waitFor(
      'the child to hold both branches',
      async () => {
        const rows = await db.prisma.actionRun.findMany({
          where: { run_id: runId, status: 'Running', claimed_by: child.workerId },
        });
        return rows.length === 2 ? true : undefined;
      },
      WAIT_MS,
    );
    expect(await child.kill()).toBe('SIGKILL');

    const completed = await applyRepairNow(
      db,
      e,
      { kind: 'run.complete_step', runId, stepSequence: 1, output: 'operator-x' },
      'complete the dead worker branch by hand',
    );
    expect(completed.status).toBe('applied');
    // The dead owner's lease lapses (its last heartbeat an hour ago, on the database clock).
    await db.prisma
      .$executeRaw`update "sagaflow"."workers" set heartbeat_at = now() - interval '1 hour' where id = ${child.workerId}`;

    // The repair's wake: B finds branch 2 held by a gone worker.
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    const parked = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(parked.stuck_reason ?? '').toMatch(/^owner_gone: step 2 \(review19-kill-y\) held by worker/);

    const step2 = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 2 } });
    const reclaimed = await e.repairs.apply({
      kind: 'run.reclaim_step',
      target: { runId, stepSequence: 2 },
      expected: { runStatus: parked.status, stepStatus: step2.status, stepAttempts: step2.attempts },
      actor: 'review19@example.test',
      reason: 'review19: run the dead owner branch again',
      idempotencyKey: `review19-reclaim-${runId}`,
    } as RepairCommand);
    expect(reclaimed.status).toBe('applied');
    for (let i = 0; i < 3; i++) {
      const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      if (r.finished_at !== null) break;
      await executeRun(e.runtime, runId);
    }

    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const rows = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    const events = await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
    const names = events.map((ev) => (ev.sequence === null ? ev.type : `${ev.type}#${ev.sequence}`));
    const outcomes = names.filter((n) => /^action\.(completed|failed)#/.test(n));
    const end = names.indexOf('run.completed');
    // Both audit rows carry the engine's clock, which this test never moves: the same `at`, so no order
    // between them is kept; they are compared as a set.
    const audits = await db.prisma.repairCommand.findMany({ where: { target_id: { startsWith: runId } } });
    expect({
      run: [run.status, run.output, run.stuck_reason],
      steps: rows.map((r) => [r.sequence, r.status, r.attempts, r.output]),
      outcomes,
      afterTheEnd: end < 0 ? ['<no end>'] : names.slice(end + 1),
      audits: audits.map((a) => [a.command, a.status]).sort(),
      ran,
    }).toEqual({
      run: ['Completed', [['operator-x', 'here-y'], 'after'], null],
      steps: [
        [1, 'Completed', 1, 'operator-x'],
        [2, 'Completed', 2, 'here-y'],
        [3, 'Completed', 1, 'after'],
      ],
      outcomes: ['action.completed#1', 'action.completed#2', 'action.completed#3'],
      afterTheEnd: [],
      audits: [
        ['run.complete_step', 'applied'],
        ['run.reclaim_step', 'applied'],
      ],
      ran: ['y'],
    });
  });
});
