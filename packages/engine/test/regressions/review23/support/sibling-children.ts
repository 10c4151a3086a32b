import type { Database, SqlDriver } from '../../../../src/db/database.ts';
import type { Json } from '../../../../src/definitions/define-action.ts';
import type { StandardSchemaV1 } from '../../../../src/definitions/standard-schema.ts';
import { defineAction, defineFlow, NonRetryableError, type Engine } from '../../../../src/index.ts';
import { executeRun } from '../../../../src/runtime/execute-run.ts';
import type { RuntimeDeps } from '../../../../src/runtime/runtime-deps.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { bareEngine, gate } from '../../harness.ts';
import { recordOf } from '../../review20/record.ts';

let n = 0;

interface Held {
  reached: ReturnType<typeof gate>;
  release: ReturnType<typeof gate>;
}

export interface SiblingOptions {
  /** Children in the parent's Promise.all: A, B (whose start can be held), and C with 3. */
  children: 2 | 3;
  /** A plain action joins the Promise.all after the children. */
  withStep?: boolean;
  /** Child A's only action fails (NonRetryableError): the parent's code compensates and rethrows. */
  firstFails?: boolean;
  /** The parent's code does not catch: a child's failure fails the parent at once, with no compensation. */
  noCatch?: boolean;
}

/**
 * Review 23. A parent that books (compensated by unbook), then awaits
 * `Promise.all([ctx.child(A), ctx.child(B), (ctx.child(C)), (ctx.action(side))])`, catching to
 * compensate. The input schemas of A and B are asynchronous: `hold('B')` makes the next check of B's
 * input wait at a gate, between the moment the parent's replay asked for B (its history checked, its
 * sequence taken) and the transaction that writes B's start. Every action's executions are counted in `ran`.
 */
export function siblingParent(db: Database, opts: SiblingOptions) {
  n += 1;
  const tag = `review23-sib-${n}`;
  const ran: Record<string, number> = {};
  const count = (name: string) => (ran[name] = (ran[name] ?? 0) + 1);
  const actionHolds: Record<string, Held | null> = {};
  const act = (name: string, fails = false) =>
    defineAction({
      name: `${tag}-${name}`,
      run: async (input: Json) => {
        count(name);
        const held = actionHolds[name];
        if (held) {
          actionHolds[name] = null;
          held.reached.open();
          await held.release.promise;
        }
        if (fails) throw new NonRetryableError(`${name} declined`);
        return `${name}:${JSON.stringify(input)}`;
      },
    });
  const book = act('book');
  const unbook = act('unbook');
  const workA = act('work-a', opts.firstFails === true);
  const workB = act('work-b');
  const workC = act('work-c');
  const side = act('side');

  const checks = { A: 0, B: 0 };
  const holds: { A: Held | null; B: Held | null } = { A: null, B: null };
  const heldInput = (which: 'A' | 'B'): StandardSchemaV1<unknown, string> => ({
    '~standard': {
      version: 1,
      vendor: 'review23',
      validate: async (v) => {
        checks[which] += 1;
        const held = holds[which];
        if (held) {
          holds[which] = null;
          held.reached.open();
          await held.release.promise;
        }
        return { value: v as string };
      },
    },
  });
  const childA = defineFlow({
    name: `${tag}-A`,
    version: 1,
    input: heldInput('A'),
    run: async (ctx, i: string) => ctx.action(workA, i),
  });
  const childB = defineFlow({
    name: `${tag}-B`,
    version: 1,
    input: heldInput('B'),
    run: async (ctx, i: string) => ctx.action(workB, i),
  });
  const childC = defineFlow({ name: `${tag}-C`, version: 1, run: async (ctx, i: string) => ctx.action(workC, i) });
  const parent = defineFlow({
    name: `${tag}-parent`,
    version: 1,
    run: async (ctx): Promise<Json> => {
      await ctx.action(book, null).compensateWith(unbook, () => null);
      if (opts.noCatch) return Promise.all([ctx.child(childA, 'a'), ctx.child(childB, 'b')]);
      try {
        const all: Promise<Json>[] = [ctx.child(childA, 'a'), ctx.child(childB, 'b')];
        if (opts.children === 3) all.push(ctx.child(childC, 'c'));
        if (opts.withStep) all.push(ctx.action(side, null).run());
        return await Promise.all(all);
      } catch (err) {
        await ctx.compensate();
        throw err;
      }
    },
  });
  const e = bareEngine(db, {
    flows: [parent, childA, childB, childC],
    actions: [book, unbook, workA, workB, workC, side],
  });

  /** The sequences the parent's children take (1 is the booking). */
  const seqs = { A: 2, B: 3, C: opts.children === 3 ? 4 : null };

  return {
    e,
    ran,
    seqs,
    names: { A: childA.name, B: childB.name, C: childC.name },
    checks,
    /**
     * Makes the next check of child `which`'s input (made by the parent's replay before it writes the
     * child's start) wait at a gate; `reached` once it waits, `release` lets it go on.
     */
    hold(which: 'A' | 'B') {
      const held: Held = { reached: gate(), release: gate() };
      holds[which] = held;
      return { reached: held.reached.promise, release: () => held.release.open() };
    },
    /** Makes the next execution of action `name` (book, unbook, work-a, work-b, work-c, side) wait at a gate. */
    holdAction(name: string) {
      const held: Held = { reached: gate(), release: gate() };
      actionHolds[name] = held;
      return { reached: held.reached.promise, release: () => held.release.open() };
    },
    start: async () => (await e.startFlow(parent, null)).runId,
  };
}

/**
 * The runtime with its driver's transactions counted, for a replay whose abandoned work (a sibling's
 * start still out after it parked) a test waits out: `mark()` before letting that work go, then
 * `quiet()` waits until one database round trip has passed (the work's microtasks have run) and every
 * transaction begun through these deps has settled; it says how many began since the mark.
 */
export function trackedDeps(db: Database, deps: RuntimeDeps) {
  const driver = deps.driver;
  if (!driver) throw new Error('the runtime has no driver');
  let inflight = 0;
  let sinceMark = 0;
  const wrapped: SqlDriver = {
    ...driver,
    transaction: (fn, limits) => {
      inflight += 1;
      sinceMark += 1;
      return driver.transaction(fn, limits).finally(() => (inflight -= 1));
    },
  };
  return {
    deps: { ...deps, driver: wrapped } as RuntimeDeps,
    mark: () => (sinceMark = 0),
    quiet: async () => {
      await db.prisma.flowRun.count();
      await waitFor(
        () => `the tracked replay's transactions to settle (${inflight} out)`,
        async () => (inflight === 0 ? true : undefined),
      );
      return sinceMark;
    },
  };
}

/**
 * Replays child `seq` of the parent once (its wake taken off the queue), as a worker would. The parent's
 * replay may have returned before the child's start committed: it parks on the first child that waits,
 * which need not be this one (a child with no input check reaches its start first), and a sibling's
 * start still out is not waited for. So the child is waited for, by its row, before it is replayed.
 */
export async function replayChild(db: Database, e: Engine, parentId: string, seq: number) {
  const child = await waitFor(
    `child ${seq} of ${parentId} to be started`,
    async () =>
      (await db.prisma.flowRun.findFirst({ where: { parent_run_id: parentId, parent_sequence: seq } })) ?? undefined,
  );
  await db.prisma.job.deleteMany({ where: { run_id: child.id } });
  await executeRun(e.runtime, child.id);
  return (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: child.id } })).status;
}

/** The parent's children, oldest first. */
export const childrenOf = (db: Database, parentId: string) =>
  db.prisma.flowRun.findMany({
    where: { parent_run_id: parentId },
    orderBy: [{ parent_sequence: 'asc' }, { id: 'asc' }],
  });

/**
 * Runs the due wakes of the parent's tree, oldest first, each by deleting its job and replaying its run,
 * as a worker would, until none is due (the runs move only when something woke them). Says how many ran
 * and which children were open at the moment the parent's end was first seen (right after the replay
 * that ended it).
 */
export async function runDueWakes(db: Database, e: Engine, parentId: string, max = 60) {
  let openAtParentEnd: (number | null)[] | null = await openAtEnd(db, parentId);
  for (let i = 0; i < max; i++) {
    const ids = [parentId, ...(await childrenOf(db, parentId)).map((c) => c.id)];
    const job = await db.prisma.job.findFirst({
      where: { run_id: { in: ids }, available_at: { lte: e.runtime.clock.now() } },
      orderBy: { id: 'asc' },
    });
    if (!job?.run_id) return { replays: i, openAtParentEnd };
    await db.prisma.job.delete({ where: { id: job.id } });
    await executeRun(e.runtime, job.run_id);
    openAtParentEnd ??= await openAtEnd(db, parentId);
  }
  throw new Error(`wakes kept coming after ${max} replays`);
}

/** The sequences of the parent's open children if the parent has ended, else null. */
async function openAtEnd(db: Database, parentId: string): Promise<(number | null)[] | null> {
  const p = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: parentId } });
  if (p.finished_at === null) return null;
  return (await childrenOf(db, parentId)).filter((c) => c.finished_at === null).map((c) => c.parent_sequence);
}

/**
 * What each test judges: the parent's end, its child.started / child.finished per sequence, how many
 * child runs each sequence has, and each child's end, open state and what came after its end.
 */
export async function judgeSiblings(db: Database, parentId: string) {
  const p = await recordOf(db, parentId);
  const kids = await childrenOf(db, parentId);
  const perSeq = (prefix: string) => {
    const out: Record<number, number> = {};
    for (const name of p.names) {
      const m = new RegExp(`^${prefix}#(\\d+)$`).exec(name);
      if (m) out[Number(m[1])] = (out[Number(m[1])] ?? 0) + 1;
    }
    return out;
  };
  const runsPerSeq: Record<number, number> = {};
  for (const k of kids) runsPerSeq[k.parent_sequence ?? -1] = (runsPerSeq[k.parent_sequence ?? -1] ?? 0) + 1;
  const children = await Promise.all(
    kids.map(async (k) => {
      const r = await recordOf(db, k.id);
      return {
        seq: k.parent_sequence,
        status: r.run.status,
        open: r.run.open,
        ends: r.ends,
        afterTheEnd: r.afterTheEnd,
        cancelRequested: k.cancel_requested_at !== null,
      };
    }),
  );
  const parentRow = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: parentId } });
  return {
    parent: {
      status: p.run.status,
      ends: p.ends,
      afterTheEnd: p.afterTheEnd,
      compensations: p.compensations,
      duplicateStepOutcomes: p.duplicateStepOutcomes,
      output: parentRow.output,
    },
    childStarted: perSeq('child\\.started'),
    childFinished: perSeq('child\\.finished'),
    runsPerSeq,
    children,
    /** Children still open although the parent has ended (orphans). */
    orphans: parentRow.finished_at === null ? [] : children.filter((c) => c.open).map((c) => c.seq),
  };
}

/** The sibling set-ups the cancel and terminate tests run each case over. */
export const siblingVariants: [string, SiblingOptions][] = [
  ['two children', { children: 2 }],
  ['three children', { children: 3 }],
  ['two children and a step', { children: 2, withStep: true }],
];

/**
 * An operator stopping a run both ways: the engine's own `cancel` / `terminate`, and the repair of that
 * kind (`run.cancel` / `run.terminate`) drafted against the run's status as it is.
 */
export function stopCommands(
  kind: 'cancel' | 'terminate',
): [string, (e: Engine, db: Database, runId: string) => Promise<unknown>][] {
  const reason = 'review23: stop';
  return [
    [
      `engine.${kind}`,
      (e, _db, runId) =>
        kind === 'cancel' ? e.cancel(runId, { reason, cleanupSeconds: 60 }) : e.terminate(runId, { reason }),
    ],
    [
      `the run.${kind} repair`,
      async (e, db, runId) => {
        const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        const common = {
          target: { runId },
          expected: { runStatus: run.status as 'Running' },
          actor: 'review23@example.test',
          reason,
          idempotencyKey: `review23-${kind}-${runId}`,
        };
        return e.repairs.apply(
          kind === 'cancel'
            ? { kind: 'run.cancel', ...common, cleanupSeconds: 60 }
            : { kind: 'run.terminate', ...common },
        );
      },
    ],
  ];
}
