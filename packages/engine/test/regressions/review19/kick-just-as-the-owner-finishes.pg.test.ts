import { describe, expect, it } from 'vitest';
import { defineAction, defineFlow, type RepairResult } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { useRunLockHolder } from '../../support/run-lock-holder.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { applyRepairNow } from './apply-repair-now.ts';

/**
 * Review 19. A run.kick that arrives just as the owner (replay A) finishes the run. A's last step is a
 * parallel block (its outcomes written on their own, so no row is Running and the kick's plan has no
 * blocker); A is held in the flow's code until the test's own connection holds the run's row, then
 * A's finish and the kick both wait for that lock, queued in the order the test chose (PostgreSQL
 * grants a row's waiters in turn). The holder commits; the two go one after the other.
 *
 * Guarantees: the run ends once, its terminal event last; a kick that went first is applied and its
 * `run.kicked` lands before the end (its wake then finds the run closed); a kick that came second is
 * a conflict with nothing but its audit row written.
 */
describe('run.kick just as the owner finishes (real PostgreSQL)', () => {
  const holder = useRunLockHolder();

  async function waitersOnLocks(n: number) {
    await waitFor(`${n} statements to wait for the run's lock`, async () => {
      const rows = await holder.db().prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock'`;
      return (rows[0]?.n ?? 0) >= n ? true : undefined;
    });
  }

  function setUp(tag: string) {
    const db = holder.db();
    const atTheEnd = { reached: gate(), release: gate() };
    let entered = 0;
    const p1 = defineAction({ name: `review19-end-p1-${tag}`, run: async () => 'p1' });
    const p2 = defineAction({ name: `review19-end-p2-${tag}`, run: async () => 'p2' });
    const flow = defineFlow({
      name: `review19-kick-at-the-end-${tag}`,
      version: 1,
      run: async (ctx) => {
        entered += 1;
        const mine = entered;
        const both = await ctx.parallel([ctx.action(p1, null), ctx.action(p2, null)]);
        if (mine === 1) {
          atTheEnd.reached.open();
          await atTheEnd.release.promise;
        }
        return both;
      },
    });
    const e = bareEngine(db, { flows: [flow], actions: [p1, p2] });
    return { db, e, flow, atTheEnd };
  }

  async function judge(runId: string) {
    const db = holder.db();
    const history = await holder.history(runId);
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const audits = await db.prisma.repairCommand.findMany({ where: { target_id: runId } });
    return {
      run: [run.status, run.output],
      ends: history.filter((h) => h === 'run.completed').length,
      last: history.at(-1),
      kicked: history.filter((h) => h === 'run.kicked').length,
      kickedBeforeTheEnd: history.indexOf('run.kicked') < history.indexOf('run.completed'),
      audits: audits.map((a) => [a.command, a.status]),
    };
  }

  it('the kick queued first: applied, run.kicked before the end, the run ends once', async () => {
    const { e, flow, atTheEnd } = setUp('kick-first');
    const { runId } = await e.startFlow(flow, null);
    const liveA = executeRun(e.runtime, runId);
    await atTheEnd.reached.promise;
    await holder.holdTheRun(runId);
    const kick = applyRepairNow(holder.db(), e, { kind: 'run.kick', runId }, 'kick as the run ends').catch(
      (err: unknown) => err,
    );
    await waitersOnLocks(1);
    atTheEnd.release.open();
    await waitersOnLocks(2);
    await holder.commitOnceWaiting('', async () => undefined);
    const kicked = (await kick) as RepairResult;
    expect(await liveA).toBe('finished');
    // The kick's wake finds the run closed.
    expect(await executeRun(e.runtime, runId)).toBe('not-open');
    expect({ kick: kicked.status, ...(await judge(runId)) }).toEqual({
      kick: 'applied',
      run: ['Completed', ['p1', 'p2']],
      ends: 1,
      last: 'run.completed',
      kicked: 1,
      kickedBeforeTheEnd: true,
      audits: [['run.kick', 'applied']],
    });
  });

  it('the finish queued first: the run ends once, the kick is a conflict that writes nothing but its audit row', async () => {
    const { e, flow, atTheEnd } = setUp('finish-first');
    const { runId } = await e.startFlow(flow, null);
    const liveA = executeRun(e.runtime, runId);
    await atTheEnd.reached.promise;
    await holder.holdTheRun(runId);
    atTheEnd.release.open();
    await waitersOnLocks(1);
    const kick = applyRepairNow(holder.db(), e, { kind: 'run.kick', runId }, 'kick as the run ends').then(
      (r) => r.status as string,
      (err: { code?: string }) => err.code ?? 'threw',
    );
    await waitersOnLocks(2);
    await holder.commitOnceWaiting('', async () => undefined);
    expect(await liveA).toBe('finished');
    const status = await kick;
    const judged = await judge(runId);
    expect({ kick: status, ...judged }).toEqual({
      kick: 'repair_conflict',
      run: ['Completed', ['p1', 'p2']],
      ends: 1,
      last: 'run.completed',
      kicked: 0,
      kickedBeforeTheEnd: judged.kickedBeforeTheEnd,
      audits: [['run.kick', 'conflict']],
    });
  });
});
