import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine } from '../harness.ts';
import { stalePlanFlow } from './stale-plan-flow.ts';

/**
 * Review 18. run.expire (and run.cancel) plan their rollback in `prepare`, a replay that writes
 * nothing, run OUTSIDE the repair's transaction and before the run's lock; the plan's compensations
 * are what the operator is told (the result's effects, the audit row) and what run.expiry_started
 * states. The worker holding the run back to back records a step with a compensation between that
 * plan and the lock; the expected state (runStatus only) still holds, so the repair applies. Does
 * the audit row state the rollback that then runs?
 *
 * Progress, not time: the planning replay (the flow's second invocation) waits at its start for the
 * test, which lets the worker's step 2 commit first; the worker's step 3 then holds the run open.
 */
describe(`an expire repair whose rollback plan is read before its lock (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it("the audit row's compensations are the ones the expiry runs", async () => {
    const { flow, actions, plan, two, three, undone } = stalePlanFlow('review18-expire');
    const e = bareEngine(db, {
      flows: [flow],
      actions,
      config: { monitor: { expiration: { plan_timeout_ms: 60_000 } } },
    });
    const { runId } = await e.startFlow(flow, null);
    const live = executeRun(e.runtime, runId);
    await two.reached.promise;

    const status = (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).status;
    const repair = e.repairs.apply({
      kind: 'run.expire',
      target: { runId },
      expected: { runStatus: status as 'Running' },
      actor: 'review18@example.test',
      reason: 'review18: expire while the worker moves on',
      idempotencyKey: `review18-expire-${runId}`,
      cleanupSeconds: 600,
    });
    // The repair's planning replay has read the record (step 2 Running) and waits.
    await plan.reached.promise;
    two.release.open();
    await three.reached.promise;
    await waitFor('step 2 to be recorded', async () =>
      (await db.prisma.actionRun.findFirst({ where: { run_id: runId, sequence: 2 } }))?.status === 'Completed'
        ? true
        : undefined,
    );
    plan.release.open();
    const applied = await repair;
    expect(applied.status).toBe('applied');
    three.release.open();
    await live;

    for (let i = 0; i < 6; i++) {
      const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      if (r.finished_at !== null) break;
      await executeRun(e.runtime, runId);
    }
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const ran = await db.prisma.compensationRun.findMany({ where: { run_id: runId }, orderBy: { ordinal: 'asc' } });
    const audit = await db.prisma.repairCommand.findFirstOrThrow({
      where: { idempotency_key: `review18-expire-${runId}` },
    });
    const started = await db.prisma.flowEvent.findFirstOrThrow({
      where: { run_id: runId, type: 'run.expiry_started' },
    });
    const names = (list: { name: string }[]) => list.map((x) => x.name.replace('review18-expire-', '')).sort();
    expect({
      run: run.status,
      compensationsRun: names(ran.filter((r) => r.status === 'Completed')),
      toldTheOperator: names(applied.effects.compensations),
      auditRow: names((audit.result as { effects: { compensations: { name: string }[] } }).effects.compensations),
      expiryStartedSays: ((started.data as { compensations: string[] }).compensations ?? [])
        .map((n) => n.replace('review18-expire-', ''))
        .sort(),
    }).toEqual({
      run: 'Expired',
      compensationsRun: ['undo-a', 'undo-b'],
      toldTheOperator: ['undo-a', 'undo-b'],
      auditRow: ['undo-a', 'undo-b'],
      expiryStartedSays: ['undo-a', 'undo-b'],
    });
    expect(undone.sort()).toEqual(['a', 'b']);
  });

  it('a rollback plan that is stale at every lock is prepared again, then the repair is a conflict that changes nothing', async () => {
    let invocations = 0;
    let runId = '';
    const a = defineAction({ name: 'review18-restale-a', run: async () => 'a' });
    const undoA = defineAction({ name: 'review18-restale-undo-a', run: async () => null });
    const flow = defineFlow({
      name: 'review18-expire-always-stale',
      version: 1,
      run: async (ctx) => {
        invocations += 1;
        // Every planning replay (each invocation after the first) sees a step move once it has read
        // the record: the step row's attempts change, committed before the repair's lock.
        if (invocations > 1)
          await db.prisma.actionRun.updateMany({
            where: { run_id: runId, sequence: 1 },
            data: { attempts: { increment: 1 } },
          });
        await ctx
          .action(a, null)
          .compensateWith(undoA, () => null)
          .run();
        await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
        return 'done';
      },
    });
    const e = bareEngine(db, { flows: [flow], actions: [a, undoA] });
    runId = (await e.startFlow(flow, null)).runId;
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    const before = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const events = await db.prisma.flowEvent.count({ where: { run_id: runId } });

    const repair = e.repairs.apply({
      kind: 'run.expire',
      target: { runId },
      expected: { runStatus: before.status as 'Waiting' },
      actor: 'review18@example.test',
      reason: 'review18: expire a run that keeps moving',
      idempotencyKey: `review18-restale-${runId}`,
    });
    await expect(repair).rejects.toMatchObject({ code: 'repair_conflict' });
    await expect(repair).rejects.toThrow(/moved on while its rollback was planned 3 times; preview the command again/);
    // Planned three times (the live run was the first invocation), and nothing but the audit row written.
    expect(invocations).toBe(4);
    const after = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect([after.status, after.expired_at, after.version]).toEqual([before.status, null, before.version]);
    expect(await db.prisma.flowEvent.count({ where: { run_id: runId } })).toBe(events);
    const audit = await db.prisma.repairCommand.findFirstOrThrow({
      where: { idempotency_key: `review18-restale-${runId}` },
    });
    expect(audit.status).toBe('conflict');
  });
});
