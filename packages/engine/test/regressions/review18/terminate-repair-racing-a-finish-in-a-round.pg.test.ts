import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow, EngineError } from '../../../src/index.ts';
import type { FusableDeps } from '../../../src/runtime/replay/fused-outcome.ts';
import { finishInBatch } from '../../../src/runtime/run-statement-batches.ts';
import { activeRun } from '../../support/active-run.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { activeLones, historyOf, loneClaims, readyToFinish, settleAfterLones } from '../../support/round-items.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine } from '../harness.ts';

/**
 * Review 18. An operator's run.terminate REPAIR (applyRepair: the run row FOR UPDATE, the expected
 * state checked, run.terminated, repair.applied and the audit row in one transaction) lands on run X
 * while X's finish is inside a round that is out: the round is held on another run Y (a side
 * connection holds Y's row), with X locked by it or not yet, depending on the id order the finishes
 * statement locks its runs in. Both orders are driven. Whichever commits first, X must end exactly
 * once, nothing of X may follow its terminal event, and the audit row must say what happened: applied
 * with X Terminated, or conflict with X Completed by the round.
 */
const worker = 'review18-round-worker';
const flow = defineFlow({ name: 'review18-round-terminate', version: 1, run: async () => null });

describe('a terminate repair racing a finish inside a round that is out (PostgreSQL)', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const lockWaiters = async () =>
    (
      await db.prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock'`
    )[0]!.n;

  async function race(prefix: string, xIsLower: boolean) {
    const e = bareEngine(db, { flows: [flow], actions: [] });
    const deps = e.runtime as FusableDeps;
    const lones = await activeLones(db, prefix, worker);
    const [a, b] = await Promise.all([activeRun(db, flow.name, worker), activeRun(db, flow.name, worker)]);
    const [lo, hi] = a < b ? [a, b] : [b, a];
    const [x, y] = xIsLower ? [lo, hi] : [hi, lo];
    const fx = await readyToFinish(db, x, worker, { x: prefix });
    const fy = await readyToFinish(db, y, worker, { y: prefix });
    const status = (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: x } })).status;

    const held = await holdRuns(db.url!, [y]);
    const round = settleAfterLones(await loneClaims(deps, worker, lones), [
      finishInBatch(deps, fx),
      finishInBatch(deps, fy),
    ]);
    await waitForWaiters(db, held.pid, 1);

    const key = `review18-round-terminate-${x}`;
    let settledRepair = false;
    const repair = e.repairs
      .apply({
        kind: 'run.terminate',
        target: { runId: x },
        expected: { runStatus: status as 'Running' },
        actor: 'review18@example.test',
        reason: 'review18: terminate while its finish is in a round',
        idempotencyKey: key,
      })
      .then(
        (r) => r.status,
        (err: unknown) => (err instanceof EngineError ? err.code : String(err)),
      )
      .finally(() => (settledRepair = true));
    // Progress: the repair either went through (X not yet locked by the round) or waits on the round.
    await waitFor('the repair to finish or to wait on the round', async () =>
      settledRepair || (await lockWaiters()) >= 2 ? true : undefined,
    );
    await held.commit();
    const [lonesDone, xFinish, yFinish] = await round;
    const repairOutcome = await repair;

    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: x } });
    const events = await db.prisma.flowEvent.findMany({ where: { run_id: x }, orderBy: { id: 'asc' } });
    const terminal = events.filter((ev) => ['run.completed', 'run.terminated'].includes(ev.type));
    const afterTerminal = terminal[0] ? events.filter((ev) => ev.id > terminal[0]!.id).map((ev) => ev.type) : [];
    const audits = await db.prisma.repairCommand.findMany({ where: { idempotency_key: key } });
    const step1 = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: x, sequence: 1 } });
    return {
      lonesDone: lonesDone.status,
      xFinish: xFinish.status === 'fulfilled' ? xFinish.value : 'rejected',
      yFinish: yFinish.status === 'fulfilled' ? yFinish.value : 'rejected',
      repairOutcome,
      xStatus: run.status,
      terminalEvents: terminal.map((ev) => ev.type),
      afterTerminal,
      step1: [step1.status, events.filter((ev) => ev.type === 'action.completed' && ev.sequence === 1).length],
      audits: audits.map((a) => a.status),
      yHistoryEnds: (await historyOf(db, y)).filter((t) => t === 'run.completed').length,
    };
  }

  it('X locked by the round first: the round completes X, the repair is a conflict with its audit row', async () => {
    const seen = await race('r18-x-first', true);
    expect(seen).toEqual({
      lonesDone: 'fulfilled',
      xFinish: 'Completed',
      yFinish: 'Completed',
      repairOutcome: 'repair_conflict',
      xStatus: 'Completed',
      terminalEvents: ['run.completed'],
      afterTerminal: [],
      step1: ['Completed', 1],
      audits: ['conflict'],
      yHistoryEnds: 1,
    });
  });

  it('X not yet locked by the round: the repair terminates X, the round writes nothing of X', async () => {
    const seen = await race('r18-y-first', false);
    expect(seen).toEqual({
      lonesDone: 'fulfilled',
      xFinish: null,
      yFinish: 'Completed',
      repairOutcome: 'applied',
      xStatus: 'Terminated',
      terminalEvents: ['run.terminated'],
      // The repair's own repair.applied goes before the handler's writes (ADR 0085): nothing follows the end.
      afterTerminal: [],
      step1: [expect.any(String), 0],
      audits: ['applied'],
      yHistoryEnds: 1,
    });
  });
  it('a run the terminate repair ends: its terminal event is the last event of its history', async () => {
    const e = bareEngine(db, { flows: [flow], actions: [] });
    const x = await activeRun(db, flow.name, worker);
    const status = (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: x } })).status;
    const applied = await e.repairs.apply({
      kind: 'run.terminate',
      target: { runId: x },
      expected: { runStatus: status as 'Running' },
      actor: 'review18@example.test',
      reason: 'review18: terminate',
      idempotencyKey: `review18-terminate-last-${x}`,
    });
    expect(applied.status).toBe('applied');
    // "Nothing recorded after a run ends": no event follows run.terminated in the run's history.
    expect((await historyOf(db, x)).slice(-2)).toEqual([expect.any(String), 'run.terminated']);
  });
});
