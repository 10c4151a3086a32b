import { describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { useRunLockHolder } from '../../support/run-lock-holder.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { applyRepairNow } from './apply-repair-now.ts';

/**
 * Review 19. run.complete_step on a Running step whose action has just returned in replay A: A's
 * write of its outcome (the step transition that also claims the next step, or its transaction path)
 * is in flight, waiting for the run's row, which the test's own connection holds; the operator's
 * repair waits for it too, queued before or after A's write as the test chose. The holder commits.
 *
 * Guarantees: exactly one of the two values is what step 1 keeps, and the audit row says which (the
 * repair applied, or a conflict that wrote nothing); the other value is rejected once; one
 * `action.completed#1`; the run ends once, on the value step 1 kept; each action runs once.
 */
describe('complete_step against an outcome in flight (real PostgreSQL)', () => {
  const holder = useRunLockHolder();

  async function waitersOnLocks(n: number) {
    await waitFor(`${n} statements to wait for a lock`, async () => {
      const rows = await holder.db().prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock'`;
      return (rows[0]?.n ?? 0) >= n ? true : undefined;
    });
  }

  function setUp(tag: string) {
    const db = holder.db();
    const ran = { one: 0, two: 0 };
    const one = { reached: gate(), release: gate() };
    const s1 = defineAction({
      name: `review19-inflight-s1-${tag}`,
      run: async () => {
        ran.one += 1;
        one.reached.open();
        await one.release.promise;
        return 'worker-1';
      },
    });
    const s2 = defineAction({
      name: `review19-inflight-s2-${tag}`,
      run: async (v: unknown) => (ran.two++, `after ${String(v)}`),
    });
    const flow = defineFlow({
      name: `review19-inflight-${tag}`,
      version: 1,
      run: async (ctx) => {
        const first = await ctx.action(s1, null);
        return ctx.action(s2, first);
      },
    });
    const e = bareEngine(db, { flows: [flow], actions: [s1, s2] });
    return { db, e, flow, ran, one };
  }

  async function judge(runId: string) {
    const db = holder.db();
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const rows = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    const history = await holder.history(runId);
    const lost = await db.prisma.anomalyLog.count({
      where: { run_id: runId, sequence: 1, code: { in: ['outcome_rejected', 'write_refused'] } },
    });
    const audits = await db.prisma.repairCommand.findMany({ where: { target_id: `${runId}#1` } });
    return {
      run: [run.status, run.output],
      step1: [rows[0]?.status, rows[0]?.output],
      completed1: history.filter((h) => h === 'action.completed#1').length,
      ends: history.filter((h) => h === 'run.completed').length,
      last: history.at(-1),
      lost,
      audits: audits.map((a) => [a.command, a.status]),
    };
  }

  async function driveToTheEnd(e: ReturnType<typeof setUp>['e'], runId: string) {
    for (let i = 0; i < 3; i++) {
      const r = await holder.db().prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      if (r.finished_at !== null) return;
      await executeRun(e.runtime, runId);
    }
  }

  it("A's outcome queued first: it is kept, the repair is a conflict", async () => {
    const { e, flow, ran, one } = setUp('worker-first');
    const { runId } = await e.startFlow(flow, null);
    const liveA = executeRun(e.runtime, runId);
    await one.reached.promise;
    await holder.holdTheRun(runId);
    one.release.open();
    await waitersOnLocks(1);
    const repair = applyRepairNow(
      holder.db(),
      e,
      { kind: 'run.complete_step', runId, stepSequence: 1, output: 'operator-1' },
      'complete step 1 by hand',
    ).then(
      (r) => r.status as string,
      (err: { code?: string }) => err.code ?? 'threw',
    );
    await waitersOnLocks(2);
    await holder.commitOnceWaiting('', async () => undefined);
    const status = await repair;
    await liveA;
    await driveToTheEnd(e, runId);
    expect({ repair: status, ...(await judge(runId)), ran }).toEqual({
      repair: 'repair_conflict',
      run: ['Completed', 'after worker-1'],
      step1: ['Completed', 'worker-1'],
      completed1: 1,
      ends: 1,
      last: 'run.completed',
      lost: 0,
      audits: [['run.complete_step', 'conflict']],
      ran: { one: 1, two: 1 },
    });
  });

  it("the repair queued first: the operator's value is kept, A's outcome rejected once, the run ends on it", async () => {
    const { e, flow, ran, one } = setUp('repair-first');
    const { runId } = await e.startFlow(flow, null);
    const liveA = executeRun(e.runtime, runId);
    await one.reached.promise;
    await holder.holdTheRun(runId);
    const repair = applyRepairNow(
      holder.db(),
      e,
      { kind: 'run.complete_step', runId, stepSequence: 1, output: 'operator-1' },
      'complete step 1 by hand',
    ).then(
      (r) => r.status as string,
      (err: { code?: string }) => err.code ?? 'threw',
    );
    await waitersOnLocks(1);
    one.release.open();
    await waitersOnLocks(2);
    await holder.commitOnceWaiting('', async () => undefined);
    const status = await repair;
    await liveA;
    await driveToTheEnd(e, runId);
    expect({ repair: status, ...(await judge(runId)), ran }).toEqual({
      repair: 'applied',
      run: ['Completed', 'after operator-1'],
      step1: ['Completed', 'operator-1'],
      completed1: 1,
      ends: 1,
      last: 'run.completed',
      lost: 1,
      audits: [['run.complete_step', 'applied']],
      ran: { one: 1, two: 1 },
    });
  });
});
