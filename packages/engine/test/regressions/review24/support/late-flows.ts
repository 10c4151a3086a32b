import type { Database } from '../../../../src/db/database.ts';
import type { Json } from '../../../../src/definitions/define-action.ts';
import type { StandardSchemaV1 } from '../../../../src/definitions/standard-schema.ts';
import { defineAction, defineFlow, NonRetryableError } from '../../../../src/index.ts';
import { TestClock } from '../../../../src/testing/test-clock.ts';
import { bareEngine, gate } from '../../harness.ts';

let n = 0;

/** How the held action `side` ends once it is let go. */
export type SideEnd = 'completes' | 'fails-for-good' | 'fails-then-retries';

interface Held {
  reached: ReturnType<typeof gate>;
  release: ReturnType<typeof gate>;
}

/**
 * Review 24. A parent that books (compensated by unbook) and then, by `shape`:
 * - `child+step`: `await Promise.all([ctx.child(A), ctx.action(side)])` (no catch: a failure fails the parent);
 * - `child+step-compensating`: the same inside `try { } catch { await ctx.compensate(); throw }`;
 * - `unawaited-step`: starts `side` without awaiting it, waits until `side` runs, and returns 'done';
 * - `unawaited-child`: starts child A (policy `policy`) without awaiting it, waits until the test lets it
 *   go on (`letParentReturn`), and returns 'done'.
 * - `child-or-signal`: `await Promise.race([ctx.child(A), ctx.awaitSignal('stop')])` and returns 'done': once
 *   the signal is in, the run may return Completed while A is open.
 * Every action execution is counted in `ran`; `holdAction(name)` holds the next execution of `name` at a gate.
 */
export function lateParent(
  db: Database,
  opts: {
    shape: 'child+step' | 'child+step-compensating' | 'unawaited-step' | 'unawaited-child' | 'child-or-signal';
    sideEnds?: SideEnd;
    policy?: 'propagate' | 'abandon';
    /** Child A itself starts a grandchild G (policy propagate) and awaits it. */
    grandchild?: boolean;
  },
) {
  n += 1;
  const tag = `review24-late-${n}`;
  const clock = new TestClock();
  const ran: Record<string, number> = {};
  const holds: Record<string, Held | null> = {};
  const count = (name: string) => (ran[name] = (ran[name] ?? 0) + 1);
  const act = (name: string, run?: (attempt: number) => void) =>
    defineAction({
      name: `${tag}-${name}`,
      retry: { maxAttempts: 3, backoff: { initialMs: 1000, multiplier: 1, jitter: false } },
      run: async (input: Json) => {
        count(name);
        const held = holds[name];
        if (held) {
          holds[name] = null;
          held.reached.open();
          await held.release.promise;
        }
        run?.(ran[name] ?? 0);
        return `${name}:${JSON.stringify(input)}`;
      },
    });
  let sideEnds = opts.sideEnds ?? 'completes';
  const book = act('book');
  const unbook = act('unbook');
  const workA = act('work-a');
  const workG = act('work-g');
  const side = act('side', (attempt) => {
    if (sideEnds === 'fails-for-good') throw new NonRetryableError('side declined');
    if (sideEnds === 'fails-then-retries' && attempt === 1) throw new Error('side hiccup');
  });
  const sideRuns = gate();
  const parentMayReturn = gate();
  const childG = defineFlow({ name: `${tag}-G`, version: 1, run: async (ctx, i: string) => ctx.action(workG, i) });
  // A's input check is asynchronous: `holdStart()` makes the parent's next start of A wait at a gate after its
  // replay asked for A and before the transaction that writes A's start (review 23's technique).
  let startHold: Held | null = null;
  const heldInput: StandardSchemaV1<unknown, string> = {
    '~standard': {
      version: 1,
      vendor: 'review24',
      validate: async (v) => {
        const held = startHold;
        if (held) {
          startHold = null;
          held.reached.open();
          await held.release.promise;
        }
        return { value: v as string };
      },
    },
  };
  const childA = defineFlow({
    name: `${tag}-A`,
    version: 1,
    input: heldInput,
    run: async (ctx, i: string): Promise<Json> => {
      if (opts.grandchild) return [await ctx.action(workA, i), await ctx.child(childG, 'g')];
      return ctx.action(workA, i);
    },
  });
  const policy = opts.policy ?? 'propagate';
  const parent = defineFlow({
    name: `${tag}-parent`,
    version: 1,
    run: async (ctx): Promise<Json> => {
      await ctx.action(book, null).compensateWith(unbook, () => null);
      switch (opts.shape) {
        case 'child+step':
          return Promise.all([ctx.child(childA, 'a', { cancellation: policy }), ctx.action(side, null).run()]);
        case 'child+step-compensating':
          try {
            return await Promise.all([ctx.child(childA, 'a', { cancellation: policy }), ctx.action(side, null).run()]);
          } catch (err) {
            await ctx.compensate();
            throw err;
          }
        case 'unawaited-step':
          void ctx
            .action(side, null)
            .run()
            .catch(() => undefined);
          await sideRuns.promise;
          return 'done';
        case 'child-or-signal':
          await Promise.race([
            ctx.child(childA, 'a', { cancellation: policy }),
            ctx.awaitSignal('stop', { timeoutSeconds: 3600 }),
          ]);
          return 'done';
        case 'unawaited-child':
          void ctx.child(childA, 'a', { cancellation: policy }).catch(() => undefined);
          await parentMayReturn.promise;
          return 'done';
      }
    },
  });
  const claimHolds: Record<string, Held | null> = {};
  const e = bareEngine(db, {
    clock,
    faults: {
      beforeClaim: async (step) => {
        const short = step.name.slice(tag.length + 1);
        const held = claimHolds[short];
        if (!held) return;
        claimHolds[short] = null;
        held.reached.open();
        await held.release.promise;
      },
    },
    flows: [parent, childA, childG],
    actions: [book, unbook, workA, workG, side],
  });
  return {
    e,
    clock,
    ran,
    names: { parent: parent.name, A: childA.name, G: childG.name, side: side.name },
    /** Holds the next execution of `name` (book, unbook, work-a, work-g, side) at a gate. */
    holdAction(name: string) {
      const held: Held = { reached: gate(), release: gate() };
      holds[name] = held;
      if (name === 'side') void held.reached.promise.then(() => sideRuns.open());
      return { reached: held.reached.promise, release: () => held.release.open() };
    },
    letParentReturn: () => parentMayReturn.open(),
    /** Holds the next claim of action `name` (before its transaction) at a gate. */
    holdClaim(name: string) {
      const held: Held = { reached: gate(), release: gate() };
      claimHolds[name] = held;
      return { reached: held.reached.promise, release: () => held.release.open() };
    },
    /** Holds the parent's next start of child A (its input check) at a gate. */
    holdStart() {
      const held: Held = { reached: gate(), release: gate() };
      startHold = held;
      return { reached: held.reached.promise, release: () => held.release.open() };
    },
    /** From now on `side` fails for good (NonRetryableError) when its held execution is let go. */
    failSideNext: () => (sideEnds = 'fails-for-good'),
    start: async (startOpts: { expiresInSeconds?: number } = {}) => (await e.startFlow(parent, null, startOpts)).runId,
  };
}

/** The anomalies journaled for a run, as `code#sequence`. */
export async function anomaliesOf(db: Database, runId: string): Promise<string[]> {
  const rows = await db.prisma.anomalyLog.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
  return rows.map((a) => `${a.code}#${a.sequence ?? '-'}`);
}
