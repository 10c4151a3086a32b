import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../src/create-engine.ts';
import { createDatabase } from '../src/db/create-database.ts';
import type { Database } from '../src/db/database.ts';
import { defineAction, defineFlow, type ActionDefinition, type Json } from '../src/index.ts';
import { enqueueJob } from '../src/store/enqueue-job.ts';
import { FaultPlan } from '../src/testing/fault-plan.ts';
import { openTestDatabase } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

const runs = new Map<string, number>();
const gate = () => {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { p, open };
};
let gates = { left: gate(), right: gate() };
const branch = (name: 'left' | 'right') =>
  defineAction({
    name,
    run: async (i: { key: string }) => {
      runs.set(`${name}:${i.key}`, (runs.get(`${name}:${i.key}`) ?? 0) + 1);
      await gates[name].p;
      return name;
    },
  });
const left = branch('left');
const right = branch('right');
const block = defineFlow({
  name: 'two-branches',
  version: 1,
  run: async (ctx, key: string) => {
    const [l, r] = await ctx.parallel([ctx.action(left, { key }), ctx.action(right, { key })] as const);
    return `${l}+${r}`;
  },
});

/**
 * Seed 000's duplicate-delivery race on a parallel block: two replays of one run each end up
 * holding one branch. The one that finishes first cannot go on; the one that finishes after the
 * other left must carry the run on itself, or the run would park forever.
 */
describe('a duplicate delivery splits a parallel block between two workers (real PostgreSQL)', () => {
  let a: Engine;
  let b: Engine;
  let dbA: Database & { url?: string };
  let dbB: Database;
  const plan = { a: null as FaultPlan | null };
  beforeAll(async () => {
    dbA = await openTestDatabase({ poolSize: 6 });
    dbB = await createDatabase({ kind: 'postgres', url: dbA.url ?? '', poolSize: 6 });
    plan.a = new FaultPlan(dbA);
    // A has one slot, busy with the first replay, so the duplicate delivery goes to B.
    const make = (db: Database, concurrency: number, faults?: FaultPlan) =>
      createEngine({
        db,
        flows: [block],
        actions: [left, right] as ActionDefinition<never, Json>[],
        logger: pino({ level: 'silent' }),
        config: { worker: { poll_interval_ms: 10, concurrency }, logging: { anomaly_level: null } },
        ...(faults ? { faults: faults.faults } : {}),
      });
    a = make(dbA, 1, plan.a);
    b = make(dbB, 4);
  });
  afterAll(async () => {
    await a.stopWorkers(1000);
    await b.stopWorkers(1000);
    await dbB.close();
    await dbA.close();
  });

  it('the worker that finishes last carries the run on and journals batch_finished_early (5 rounds)', async () => {
    for (let round = 0; round < 5; round++) {
      const key = `r${round}`;
      gates = { left: gate(), right: gate() };
      await a.stopWorkers();
      await b.stopWorkers();
      const { runId } = await a.startFlow(block, key);
      const rightRow = async () => dbA.prisma.actionRun.findFirst({ where: { run_id: runId, name: 'right' } });
      // Worker A reaches the right branch's claim only after worker B has claimed it. B's worker id is
      // read when checked: each pool B starts is a new worker with an id of its own (ADR 0010's second
      // addendum), so a name given to B's runtime before its start held only in the first round, and in
      // the others A's claim waited out waitFor's 20 s and failed (and A's next stop its 10 s drain).
      plan.a?.delayClaim('right', () =>
        waitFor('B to claim the right branch', async () =>
          (await rightRow())?.claimed_by === (b.runtime as { workerId: string }).workerId ? true : undefined,
        ),
      );
      a.startWorkers();
      await waitFor('A to run the left branch', async () => (runs.get(`left:${key}`) ? true : undefined));
      b.startWorkers();
      await enqueueJob(dbA.prisma, { kind: 'wake-run', runId, availableAt: new Date(0) });
      await waitFor('B to run the right branch', async () => (runs.get(`right:${key}`) ? true : undefined));
      // B's two branches run concurrently: B must have seen the left branch Running in A's hands
      // (its lost claim journaled) before A finishes it, or B would simply find it Completed and
      // nothing would finish early. Wait for that progress, not for time.
      await waitFor('B to find the left branch held by A', async () =>
        (await dbA.prisma.anomalyLog.count({ where: { run_id: runId, code: 'claim_lost', name: 'left' } })) > 0
          ? true
          : undefined,
      );
      // A finishes first: the right branch is still in B's hands, so A must park.
      gates.left.open();
      await waitFor('A to record the left branch', async () =>
        (await dbA.prisma.actionRun.findFirst({ where: { run_id: runId, name: 'left' } }))?.status === 'Completed'
          ? true
          : undefined,
      );
      await new Promise((r) => setTimeout(r, 100));
      expect((await a.getRun(runId))?.run.status).not.toBe('Completed');
      gates.right.open();
      const done = await waitFor('the run to complete', async () => {
        const d = await a.getRun(runId);
        return d?.run.status === 'Completed' ? d : undefined;
      });
      expect(done.run.output).toBe('left+right');
      expect(runs.get(`left:${key}`)).toBe(1);
      expect(runs.get(`right:${key}`)).toBe(1);
      const codes = (await dbA.prisma.anomalyLog.findMany({ where: { run_id: runId } })).map((x) => x.code);
      expect(codes).toContain('batch_finished_early');
      expect(await dbA.prisma.flowEvent.count({ where: { run_id: runId, type: 'run.completed' } })).toBe(1);
    }
  });
});
