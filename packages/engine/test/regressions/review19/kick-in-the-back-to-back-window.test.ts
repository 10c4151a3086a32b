import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { bareEngine, gate } from '../harness.ts';
import { applyRepairNow } from './apply-repair-now.ts';

/**
 * Review 19. An operator's run.kick against a run whose owner (replay A) executes its steps back to
 * back, with no job-table round trip between them. Each interleaving is driven by progress: a gate
 * in the flow's code (first replay only) or in an action; the kick's wake is replayed by the test (B).
 *
 * Guarantees checked: one row per step and one outcome event per step, each action run once per
 * attempt, nothing recorded after the run's terminal event, the run ends once, and the audit row says
 * what happened (applied, or refused with nothing written).
 */
describe(`run.kick in the back-to-back window (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  /** A's record after a parallel block, held in the flow's code before steps 3 and 4 (first replay only). */
  function flowBetweenSteps(tag: string, opts: { gateStep3: boolean }) {
    const ran = { p1: 0, p2: 0, s3: 0, s4: 0 };
    const between = { reached: gate(), release: gate() };
    const step3 = { reached: gate(), release: gate() };
    let entered = 0;
    const p1 = defineAction({ name: `review19-kick-p1-${tag}`, run: async () => (ran.p1++, 'p1') });
    const p2 = defineAction({ name: `review19-kick-p2-${tag}`, run: async () => (ran.p2++, 'p2') });
    const s3 = defineAction({
      name: `review19-kick-s3-${tag}`,
      run: async () => {
        ran.s3++;
        if (opts.gateStep3 && ran.s3 === 1) {
          step3.reached.open();
          await step3.release.promise;
        }
        return 's3';
      },
    });
    const s4 = defineAction({ name: `review19-kick-s4-${tag}`, run: async () => (ran.s4++, 's4') });
    const flow = defineFlow({
      name: `review19-kick-between-${tag}`,
      version: 1,
      run: async (ctx) => {
        entered += 1;
        const mine = entered;
        const both = await ctx.parallel([ctx.action(p1, null), ctx.action(p2, null)]);
        if (mine === 1) {
          between.reached.open();
          await between.release.promise;
        }
        return [both, await ctx.action(s3, null), await ctx.action(s4, null)];
      },
    });
    const e = bareEngine(db, { flows: [flow], actions: [p1, p2, s3, s4] });
    return { e, flow, ran, between, step3 };
  }

  /** The recorded state every test judges: rows, events (outcomes per step, order around the end), audit. */
  async function recordOf(runId: string) {
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const rows = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    const events = await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
    const audits = await db.prisma.repairCommand.findMany({ where: { target_id: runId }, orderBy: { at: 'asc' } });
    const names = events.map((ev) => (ev.sequence === null ? ev.type : `${ev.type}#${ev.sequence}`));
    const stepEvents = names.filter((n) => /^action\.(started|completed|failed)#/.test(n));
    const end = names.findIndex((n) => n.startsWith('run.completed') || n.startsWith('run.failed'));
    return {
      run: [run.status, run.output],
      steps: rows.map((r) => [r.sequence, r.status, r.attempts]),
      duplicateStepEvents: stepEvents.filter((n, i) => stepEvents.indexOf(n) !== i),
      afterTheEnd: end < 0 ? ['<no end>'] : names.slice(end + 1),
      ends: names.filter((n) => n === 'run.completed' || n === 'run.failed').length,
      kicked: names.filter((n) => n === 'run.kicked').length,
      audits: audits.map((a) => [a.command, a.status]),
    };
  }

  /** The run ended once, Completed, each step recorded and run once, after `kicks` kicks all applied. */
  async function expectEachStepOnce(runId: string, ran: Record<string, number>, kicks: number) {
    expect(await recordOf(runId)).toEqual({
      run: ['Completed', [['p1', 'p2'], 's3', 's4']],
      steps: [
        [1, 'Completed', 1],
        [2, 'Completed', 1],
        [3, 'Completed', 1],
        [4, 'Completed', 1],
      ],
      duplicateStepEvents: [],
      afterTheEnd: [],
      ends: 1,
      kicked: kicks,
      audits: Array.from({ length: kicks }, () => ['run.kick', 'applied']),
    });
    expect(ran).toEqual({ p1: 1, p2: 1, s3: 1, s4: 1 });
  }

  it('kicked between two steps, the duplicate replay runs to the end first: the owner then writes nothing', async () => {
    const { e, flow, ran, between } = flowBetweenSteps('b-first', { gateStep3: false });
    const { runId } = await e.startFlow(flow, null);
    const liveA = executeRun(e.runtime, runId);
    await between.reached.promise;
    // No row is Running: the block's outcomes were written on their own. The kick applies.
    const kick = await applyRepairNow(db, e, { kind: 'run.kick', runId }, 'kick between two steps');
    expect(kick.status).toBe('applied');
    expect(await executeRun(e.runtime, runId)).toBe('finished');
    between.release.open();
    await liveA;
    await expectEachStepOnce(runId, ran, 1);
  });

  it('kicked between two steps, the owner claims the next step first: the duplicate parks, the owner ends the run', async () => {
    const { e, flow, ran, between, step3 } = flowBetweenSteps('a-first', { gateStep3: true });
    const { runId } = await e.startFlow(flow, null);
    const liveA = executeRun(e.runtime, runId);
    await between.reached.promise;
    const kick = await applyRepairNow(db, e, { kind: 'run.kick', runId }, 'kick between two steps');
    expect(kick.status).toBe('applied');
    between.release.open();
    await step3.reached.promise;
    // B meets step 3 Running under A: it must neither run it nor leave the run stuck.
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    step3.release.open();
    await liveA;
    await expectEachStepOnce(runId, ran, 1);
  });

  it('kicked mid-step (Running, no reclaim deadline, owner alive): refused, and nothing is written', async () => {
    const { e, flow, ran, between, step3 } = flowBetweenSteps('mid-step', { gateStep3: true });
    const { runId } = await e.startFlow(flow, null);
    const liveA = executeRun(e.runtime, runId);
    await between.reached.promise;
    between.release.open();
    await step3.reached.promise;
    const jobsBefore = await db.prisma.job.count({ where: { run_id: runId } });
    // A refusal is thrown to the caller (repair_refused), with its audit row written.
    const kick = await applyRepairNow(db, e, { kind: 'run.kick', runId }, 'kick mid-step').then(
      (r) => ({ status: r.status, message: '' }),
      (err: { code?: string; message?: string }) => ({ status: err.code ?? 'threw', message: err.message ?? '' }),
    );
    expect(kick.message).toMatch(/step 3 .* is Running and has no reclaim deadline/);
    const jobsAfter = await db.prisma.job.count({ where: { run_id: runId } });
    step3.release.open();
    await liveA;
    const record = await recordOf(runId);
    expect([kick.status, jobsAfter - jobsBefore, record.kicked, record.audits]).toEqual([
      'repair_refused',
      0,
      0,
      [['run.kick', 'refused']],
    ]);
    expect(record.run).toEqual(['Completed', [['p1', 'p2'], 's3', 's4']]);
    expect(ran).toEqual({ p1: 1, p2: 1, s3: 1, s4: 1 });
  });

  it("kicked mid-step while the owner's heartbeat is overdue: the step is reclaimed, the old attempt's outcome rejected once", async () => {
    const { e, flow, ran, between, step3 } = flowBetweenSteps('lease-due', { gateStep3: true });
    const { runId } = await e.startFlow(flow, null);
    const liveA = executeRun(e.runtime, runId);
    await between.reached.promise;
    between.release.open();
    await step3.reached.promise;
    // A's pool missed its heartbeats (a lease renewal due and not made): it counts as gone.
    await db.prisma.worker.upsert({
      where: { id: e.runtime.workerId },
      create: { id: e.runtime.workerId, heartbeat_at: new Date(Date.now() - 3_600_000) },
      update: { heartbeat_at: new Date(Date.now() - 3_600_000) },
    });
    const kick = await applyRepairNow(db, e, { kind: 'run.kick', runId }, 'kick an orphaned step');
    expect(kick.status).toBe('applied');
    // B claims step 3 again (attempt 2) and runs the run to its end while attempt 1 still runs in A.
    expect(await executeRun(e.runtime, runId)).toBe('finished');
    step3.release.open();
    await liveA;
    const record = await recordOf(runId);
    // A's late outcome of attempt 1: refused (the run had ended) or rejected (the row changed hands), once.
    const lost = await db.prisma.anomalyLog.findMany({
      where: { run_id: runId, code: { in: ['outcome_rejected', 'write_refused'] }, sequence: 3 },
    });
    const rejected = lost.length;
    expect({ ...record, rejected }).toEqual({
      run: ['Completed', [['p1', 'p2'], 's3', 's4']],
      steps: [
        [1, 'Completed', 1],
        [2, 'Completed', 1],
        [3, 'Completed', 2],
        [4, 'Completed', 1],
      ],
      // Two claims of step 3 (attempts 1 and 2) are two action.started#3: only the outcomes must be unique.
      duplicateStepEvents: ['action.started#3'],
      afterTheEnd: [],
      ends: 1,
      kicked: 1,
      audits: [['run.kick', 'applied']],
      rejected: 1,
    });
    expect(ran).toEqual({ p1: 1, p2: 1, s3: 2, s4: 1 });
  });

  it('two kicks at once between two steps: both applied, three replays, each step recorded once', async () => {
    const { e, flow, ran, between } = flowBetweenSteps('two-kicks', { gateStep3: false });
    const { runId } = await e.startFlow(flow, null);
    const liveA = executeRun(e.runtime, runId);
    await between.reached.promise;
    const kicks = await Promise.all([
      applyRepairNow(db, e, { kind: 'run.kick', runId }, 'first of two kicks'),
      applyRepairNow(db, e, { kind: 'run.kick', runId }, 'second of two kicks'),
    ]);
    expect(kicks.map((k) => k.status)).toEqual(['applied', 'applied']);
    // The two kicks' wakes replay side by side (in whatever order the machine runs them), then A goes on.
    const outcomes = await Promise.all([executeRun(e.runtime, runId), executeRun(e.runtime, runId)]);
    between.release.open();
    await liveA;
    expect(outcomes).toContain('finished');
    await expectEachStepOnce(runId, ran, 2);
  });
});
