import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFlow } from '../src/api/start-flow.ts';
import type { Database } from '../src/db/database.ts';
import { defineAction, defineFlow, type Json } from '../src/index.ts';
import { createTestEngine, type TestEngine } from '../src/testing/create-test-engine.ts';
import { countStatements, type SentStatement } from './support/count-statements.ts';
import { completedStepsHistory, stepHistory } from './support/step-history.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';
import { bareEngine } from './regressions/harness.ts';

/**
 * ADR 0048: a start handed to its own pool whose replay's first durable write is a new action step
 * writes that step, claimed, in the start's own statement; anything else starts as before.
 */
const ran: string[] = [];
const noop = (name: string) =>
  defineAction({
    name,
    run: async (input: Json) => {
      ran.push(name);
      return { done: name, input };
    },
  });
const [one, two, three] = [noop('first-step-one'), noop('first-step-two'), noop('first-step-three')];
const threeSteps = defineFlow({
  name: 'first-step-three',
  version: 1,
  run: async (ctx, input: { n: number }) => {
    await ctx.action(one, input);
    await ctx.action(two, null);
    return ctx.action(three, null);
  },
});
const child = defineFlow({ name: 'first-step-child', version: 1, run: async (ctx) => ctx.action(one, 'child') });
const notFirst = {
  sleep: defineFlow({
    name: 'first-step-sleep',
    version: 1,
    run: async (ctx) => (await ctx.sleep(5), ctx.action(one, null)),
  }),
  signal: defineFlow({
    name: 'first-step-signal',
    version: 1,
    run: async (ctx) => [await ctx.awaitSignal('go', { timeoutSeconds: 600 }), await ctx.action(one, null)],
  }),
  child: defineFlow({ name: 'first-step-parent', version: 1, run: async (ctx) => ctx.child(child, null) }),
  value: defineFlow({
    name: 'first-step-value',
    version: 1,
    run: async (ctx) => [ctx.uuid().length, await ctx.action(one, null)],
  }),
  parallel: defineFlow({
    name: 'first-step-parallel',
    version: 1,
    run: async (ctx) => ctx.parallel([ctx.action(one, 'p1'), ctx.action(two, 'p2')]),
  }),
  none: defineFlow({ name: 'first-step-none', version: 1, run: async () => 'nothing to do' }),
  throws: defineFlow({
    name: 'first-step-throws',
    version: 1,
    run: async () => {
      throw new Error('refused at once');
    },
  }),
  // Code awaiting something outside the engine (here the event loop's next turn, which comes after
  // the begun replay's own bound, queued before the code ran).
  external: defineFlow({
    name: 'first-step-external',
    version: 1,
    run: async (ctx) => (await new Promise((r) => setImmediate(r)), ctx.action(one, null)),
  }),
};
const twoAtOnce = defineFlow({
  name: 'first-step-two-at-once',
  version: 1,
  run: async (ctx) => Promise.all([ctx.action(one, 'x'), ctx.action(two, 'y')]),
});
// Code that names its first step by the input's first key: jsonb gives the keys back in its own order.
const byFirstKey = defineFlow({
  name: 'first-step-by-first-key',
  version: 1,
  run: async (ctx, input: Record<string, number>) => {
    const [first] = Object.keys(input);
    return ctx.action(first === 'zz' ? two : one, first ?? null);
  },
});
const flows = [threeSteps, child, twoAtOnce, byFirstKey, ...Object.values(notFirst)];
const actions = [one, two, three];

const fusedText = '/* sagaflow: start with first step */';
const startsText = '/* sagaflow: starts */';
/** The pool's own statements (its job claims, its heartbeat), which come whenever they come: not the runs'. */
const poolOwn = (s: SentStatement) =>
  s.text.startsWith('/* sagaflow: job claims */') || s.text.startsWith('insert into "sagaflow"."workers"');
const fused = (sent: SentStatement[]) => sent.filter((s) => s.text.startsWith(fusedText));
const threeStepHistory = completedStepsHistory(3);

describe(`a start handed to its own pool writes its first step in the same statement (${testDbKind()})`, () => {
  let db: Database;
  let counted: ReturnType<typeof countStatements>;
  let t: TestEngine | null = null;
  beforeAll(async () => {
    db = await openTestDatabase();
    counted = countStatements(db);
  });
  afterEach(async () => {
    await t?.close();
    t = null;
  });
  afterAll(async () => {
    await db.close();
  });

  /** An engine with its pool started and its first claim made: from here on, what it sends is the runs'. */
  const withPool = async (worker: Record<string, number | boolean> = {}, reclaim = false) => {
    t = await createTestEngine({
      db: counted.db,
      flows,
      actions,
      config: {
        worker: { poll_interval_ms: 60_000, heartbeat_interval_ms: 600_000, ...worker },
        ...(reclaim ? { reclaim: { actions: { enabled: true, after_seconds: 5 } } } : {}),
      },
    });
    t.engine.startWorkers();
    const engine = t.engine;
    await waitFor('the pool to make its first claim', async () =>
      (engine.workerCounters()?.claims ?? 0) > 0 ? true : undefined,
    );
    counted.sent.length = 0;
    return t;
  };
  const history = (runId: string) => stepHistory(db, runId);
  const finished = (runId: string) =>
    waitFor(`run ${runId} to finish`, async () => {
      const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      return run.finished_at ? run : undefined;
    });
  const steps = async (runId: string) =>
    (await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } })).map((s) => [
      s.sequence,
      s.name,
      s.status,
      s.attempts,
    ]);

  it('a started 3-step flow sends 4 writing statements, none in a transaction, and records the history it always did', async () => {
    const { engine } = await withPool();
    const { runId } = await engine.startFlow(threeSteps, { n: 1 });
    const run = await finished(runId);
    expect([run.status, run.output]).toEqual(['Completed', { done: 'first-step-three', input: null }]);
    // The pool's own statements (its LISTEN coming up nudges a claim) are not the run's.
    const runs = counted.sent.filter((s) => !poolOwn(s));
    const sent = runs.map((s) => `${s.inTransaction ? 'tx: ' : ''}${s.text.slice(0, 40)}`).join('\n');
    // The start with step 1's claim, steps 2 and 3 each carrying the outcome before, the finish.
    expect(
      runs.map((s) => s.text.slice(0, s.text.indexOf('*/') + 2)),
      sent,
    ).toEqual([
      fusedText,
      '/* sagaflow: step transitions */',
      '/* sagaflow: step transitions */',
      '/* sagaflow: top-level run finishes */',
    ]);
    expect(await history(runId)).toEqual(threeStepHistory);
    expect(await steps(runId)).toEqual([
      [1, 'first-step-one', 'Completed', 1],
      [2, 'first-step-two', 'Completed', 1],
      [3, 'first-step-three', 'Completed', 1],
    ]);
    const first = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 1 } });
    // Step 1 ran with the code's input, and its started event names its attempt, as a new step's does.
    expect(first.output).toEqual({ done: 'first-step-one', input: { n: 1 } });
    const started = await db.prisma.flowEvent.findFirstOrThrow({ where: { run_id: runId, type: 'action.started' } });
    expect([started.row_id, started.data]).toEqual([first.id, { name: 'first-step-one', attempt: 1 }]);
    expect(await db.prisma.job.count({ where: { run_id: runId } })).toBe(0);
  });

  it('code that asks for two steps at once: the start writes the first one asked for, and no other', async () => {
    const { engine } = await withPool();
    const { runId } = await engine.startFlow(twoAtOnce, null);
    const [start] = fused(counted.sent);
    // The statement's step columns (a lone start's, as scalars: ADR 0053): sequence 1, the action asked for first.
    expect(start?.values.slice(11, 14)).toEqual([1, 'action', 'first-step-one']);
    expect((await finished(runId)).status).toBe('Completed');
    expect((await history(runId)).slice(0, 3)).toEqual(['run.started', 'run.running', 'action.started#1']);
    expect((await steps(runId)).map(([seq, name, status, attempts]) => [seq, name, status, attempts])).toEqual([
      [1, 'first-step-one', 'Completed', 1],
      [2, 'first-step-two', 'Completed', 1],
    ]);
  });

  it("code that picks its first step by the input's key order sees jsonb's order before and after the start", async () => {
    const { engine } = await withPool();
    // As given, "zz" comes first; jsonb keeps "b" (shorter) first, and so does every later replay.
    const { runId } = await engine.startFlow(byFirstKey, { zz: 1, b: 2 });
    expect(fused(counted.sent)).toHaveLength(1);
    const run = await finished(runId);
    expect([run.status, run.stuck_reason]).toEqual(['Completed', null]);
    expect(await steps(runId)).toEqual([[1, 'first-step-one', 'Completed', 1]]);
  });

  it('the run and step the start returns for its replay are the rows it wrote', async () => {
    const e = bareEngine(db, { flows, actions });
    const started = await startFlow(
      e.runtime,
      threeSteps.name,
      { z: 1, a: [2] },
      { tags: ['t'], businessKey: 'rows-written' },
      true,
    );
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: started.runId } });
    const step = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: started.runId } });
    const job = await db.prisma.job.findFirstOrThrow({ where: { run_id: started.runId, locked_by: { not: null } } });
    expect(started.loaded).toEqual({ run, activeVersion: 1, firstStep: step });
    expect(started.job?.id).toBe(job.id);
    expect([job.locked_by, job.deliveries]).toEqual([e.runtime.workerId, 1]);
    await db.prisma.job.deleteMany({ where: { run_id: started.runId } });
  });

  it('a duplicate business key through the fused statement: duplicate_business_key, no run, no step, the slot given back', async () => {
    const { engine } = await withPool({ concurrency: 1 });
    const ranBefore = ran.length;
    const { runId } = await engine.startFlow(threeSteps, { n: 2 }, { businessKey: 'first-step-dup' });
    await finished(runId);
    // The finish is seen committed before the pool has read its answer and freed the slot (CI once
    // refused the next start as full, and it went without its first step).
    await waitFor('the run to free its slot', async () =>
      engine.workerCounters()!.slotsTaken === 0 ? true : undefined,
    );
    counted.sent.length = 0;
    await expect(engine.startFlow(threeSteps, { n: 3 }, { businessKey: 'first-step-dup' })).rejects.toMatchObject({
      code: 'duplicate_business_key',
      message: 'a run of "first-step-three" with business key "first-step-dup" already exists',
    });
    // It was the start with its first step that the key refused.
    expect(fused(counted.sent)).toHaveLength(1);
    expect(await db.prisma.flowRun.count({ where: { business_key: 'first-step-dup' } })).toBe(1);
    expect(await db.prisma.actionRun.count({ where: { run: { business_key: 'first-step-dup' } } })).toBe(3);
    expect(ran.length - ranBefore).toBe(3);
    // The one slot came back: the next start is handed over again, not refused as full.
    const before = engine.workerCounters()!;
    const next = await engine.startFlow(threeSteps, { n: 4 });
    expect((await finished(next.runId)).status).toBe('Completed');
    const after = engine.workerCounters()!;
    expect([after.handOffs - before.handOffs, after.handOffsRefused.full - before.handOffsRefused.full]).toEqual([
      1, 0,
    ]);
  });

  it('32 concurrent starts share fused statements, and each run has one row and one history per step', async () => {
    const { engine } = await withPool({ concurrency: 64 });
    const starts = await Promise.allSettled([
      ...Array.from({ length: 30 }, (_, n) => engine.startFlow(threeSteps, { n })),
      // Two starts asking for one key never share a statement: one is written, the other refused.
      engine.startFlow(threeSteps, { n: 30 }, { businessKey: 'first-step-pair' }),
      engine.startFlow(threeSteps, { n: 31 }, { businessKey: 'first-step-pair' }),
    ]);
    const ids = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value.runId] : []));
    const refused = starts.flatMap((s) => (s.status === 'rejected' ? [s.reason as { code?: string }] : []));
    expect(refused.map((r) => r.code)).toEqual(['duplicate_business_key']);
    expect(ids).toHaveLength(31);
    for (const id of ids) {
      expect((await finished(id)).status).toBe('Completed');
      expect(await history(id)).toEqual(threeStepHistory);
      expect((await steps(id)).map(([seq, , status, attempts]) => [seq, status, attempts])).toEqual([
        [1, 'Completed', 1],
        [2, 'Completed', 1],
        [3, 'Completed', 1],
      ]);
    }
    const carried = fused(counted.sent).map((s) => (s.values[0] as unknown[]).length);
    expect(Math.max(...carried)).toBeGreaterThan(1);
    // The pair's refused statement was sent again start by start: every run was written by a fused statement.
    expect(carried.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(32);
    expect(await db.prisma.flowRun.count({ where: { business_key: 'first-step-pair' } })).toBe(1);
  });

  it('a worker that dies right after the fused statement: the run is reclaimed and each step has one outcome', async () => {
    const { engine, faults, clock } = await withPool({ poll_interval_ms: 10, lease_seconds: 60 }, true);
    faults.crashAfterClaim('first-step-one');
    const ranBefore = ran.length;
    const { runId } = await engine.startFlow(threeSteps, { n: 5 });
    expect(fused(counted.sent)).toHaveLength(1);
    await waitFor('the crash after the first claim', async () => {
      const job = await db.prisma.job.findFirst({ where: { run_id: runId, locked_by: { not: null } } });
      return job ? true : undefined;
    });
    expect(await steps(runId)).toEqual([[1, 'first-step-one', 'Running', 1]]);
    // Past the lease and the step's reclaim deadline, the job comes back and the step is reclaimed.
    clock.advance(61_000);
    const done = await t!.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('Completed');
    expect(ran.slice(ranBefore)).toEqual(['first-step-one', 'first-step-two', 'first-step-three']);
    expect(await steps(runId)).toEqual([
      [1, 'first-step-one', 'Completed', 2],
      [2, 'first-step-two', 'Completed', 1],
      [3, 'first-step-three', 'Completed', 1],
    ]);
    const completed = await db.prisma.flowEvent.findMany({ where: { run_id: runId, type: 'action.completed' } });
    expect(completed.map((e) => e.sequence).sort()).toEqual([1, 2, 3]);
    expect(await db.prisma.job.count({ where: { run_id: runId, kind: 'wake-run', locked_by: { not: null } } })).toBe(0);
  });

  describe('a first durable write that is not a new action step: the start is written alone, as before', () => {
    const rows = async (runId: string) =>
      (await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } })).map((s) => [
        s.sequence,
        s.kind,
        s.name,
        s.status,
        s.attempts,
      ]);
    it.each(Object.keys(notFirst) as (keyof typeof notFirst)[])(
      '%s first: one plain start, and the run records what a start no pool took records',
      async (name) => {
        const flow = notFirst[name];
        const { engine } = await withPool();
        const { runId } = await engine.startFlow(flow, null);
        expect(engine.workerCounters()?.handOffs).toBe(1);
        // Nothing reached the database before the start: the replay begun from the unwritten run wrote nothing.
        const first = counted.sent.find((s) => !poolOwn(s))?.text ?? '';
        expect(first.startsWith(startsText), first.slice(0, 60)).toBe(true);
        const starts = counted.sent.filter((s) => s.text.startsWith(startsText) || s.text.startsWith(fusedText));
        expect(starts.map((s) => s.text.slice(0, s.text.indexOf('*/') + 2))).toEqual([startsText]);
        await t!.close();
        // Before this change, and still for a start no pool takes: the same flow, written alone, replayed by a poll.
        t = await createTestEngine({ db: counted.db, flows, actions });
        const before = await t.engine.startFlow(flow, null);
        for (const id of [before.runId, runId]) {
          if (name === 'signal') {
            await t.drive(id, { until: (d) => d.run.waitingFor !== null });
            await t.engine.signal(id, 'go', 'now');
          }
          await t.drive(id);
        }
        const ended = async (id: string) => {
          const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id } });
          return [r.status, r.output, r.error];
        };
        expect(await ended(runId)).toEqual(await ended(before.runId));
        // A parallel block's branches run side by side: their events interleave as they come.
        const order = (events: string[]) => (name === 'parallel' ? [...events].sort() : events);
        expect(order(await history(runId))).toEqual(order(await history(before.runId)));
        expect(await rows(runId)).toEqual(await rows(before.runId));
        expect(fused(counted.sent)).toHaveLength(0);
      },
    );
  });
});
