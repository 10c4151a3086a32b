import type { Database, SqlDriver } from '../../../../src/db/database.ts';
import type { Json } from '../../../../src/definitions/define-action.ts';
import { defineAction, defineFlow, type Engine } from '../../../../src/index.ts';
import type { RuntimeDeps } from '../../../../src/runtime/runtime-deps.ts';
import type { PendingOutcome } from '../../../../src/runtime/steps/pending-outcome.ts';
import { TestClock } from '../../../../src/testing/test-clock.ts';
import { bareEngine, gate } from '../../harness.ts';

let n = 0;

/**
 * Wraps the engine's HeldOutcomes.hold so a test can wait, by progress, until a late outcome whose retry
 * budget ran out has been handed to the backlog.
 */
export function watchHolds(deps: RuntimeDeps) {
  const held = deps.heldOutcomes;
  const original = held.hold.bind(held);
  const seen: { runId: string; sequences: number[] }[] = [];
  const waiters: { pred: (s: number[]) => boolean; open: () => void }[] = [];
  held.hold = (runId: string, outcomes: PendingOutcome[]) => {
    original(runId, outcomes);
    const sequences = outcomes.map((o) => o.sequence);
    seen.push({ runId, sequences });
    for (const w of waiters.splice(0)) {
      if (w.pred(sequences)) w.open();
      else waiters.push(w);
    }
  };
  return {
    seen,
    /** Resolves once an outcome of step `sequence` has been handed to the backlog. */
    heldFor(sequence: number): Promise<void> {
      if (seen.some((s) => s.sequences.includes(sequence))) return Promise.resolve();
      const g = gate();
      waiters.push({ pred: (s) => s.includes(sequence), open: g.open });
      return g.promise;
    },
  };
}

interface Held {
  reached: ReturnType<typeof gate>;
  release: ReturnType<typeof gate>;
}

/**
 * Review 27. A parent that books, then `await Promise.all([ctx.child(A), ctx.action(s1), ctx.action(s2)])`
 * (sequences: book 1, A 2, s1 3, s2 4). Every action execution is counted in `ran`; `holdAction(name)`
 * holds the next execution of `name` at a gate. The engine's late-write retry budget is one attempt
 * unless `outcomeRetryAttempts` says otherwise.
 */
export function twoSideParent(db: Database, opts: { outcomeRetryAttempts?: number } = {}) {
  n += 1;
  const tag = `review27-two-${n}`;
  const clock = new TestClock();
  const ran: Record<string, number> = {};
  const holds: Record<string, Held | null> = {};
  const act = (name: string) =>
    defineAction({
      name: `${tag}-${name}`,
      run: async (input: Json) => {
        ran[name] = (ran[name] ?? 0) + 1;
        const held = holds[name];
        if (held) {
          holds[name] = null;
          held.reached.open();
          await held.release.promise;
        }
        return `${name}:${JSON.stringify(input)}`;
      },
    });
  const book = act('book');
  const workA = act('work-a');
  const s1 = act('s1');
  const s2 = act('s2');
  const childA = defineFlow({ name: `${tag}-A`, version: 1, run: async (ctx, i: string) => ctx.action(workA, i) });
  const parent = defineFlow({
    name: `${tag}-parent`,
    version: 1,
    run: async (ctx): Promise<Json> => {
      await ctx.action(book, null);
      return Promise.all([ctx.child(childA, 'a'), ctx.action(s1, null).run(), ctx.action(s2, null).run()]);
    },
  });
  const attempts = opts.outcomeRetryAttempts ?? 1;
  const e: Engine = bareEngine(db, {
    clock,
    flows: [parent, childA],
    actions: [book, workA, s1, s2],
    config: { worker: { outcome_retry: { max_attempts: attempts, base_delay_ms: 1, max_delay_ms: 1 } } },
  });
  return {
    e,
    clock,
    ran,
    names: { s1: s1.name, s2: s2.name, A: childA.name },
    holdAction(name: string) {
      const held: Held = { reached: gate(), release: gate() };
      holds[name] = held;
      return { reached: held.reached.promise, release: () => held.release.open() };
    },
    start: async () => (await e.startFlow(parent, null)).runId,
  };
}

/**
 * A driver for worker A: while `mode` is 'fail' every transaction fails (the database away); while it
 * is 'hang' each new transaction waits at `hung` (a connection that does not answer) and then goes on
 * to the database once `resume()` is called.
 */
export function outageDeps(deps: RuntimeDeps) {
  const driver = deps.driver;
  if (!driver) throw new Error('the runtime has no driver');
  let resumeGate = gate();
  const hungGate = gate();
  const state = { mode: 'up' as 'up' | 'fail' | 'hang', refused: 0, hung: 0 };
  const wrapped: SqlDriver = {
    ...driver,
    transaction: async (fn, limits) => {
      if (state.mode === 'fail') {
        state.refused += 1;
        throw new Error('review27: the database is away');
      }
      if (state.mode === 'hang') {
        state.hung += 1;
        hungGate.open();
        await resumeGate.promise;
      }
      return driver.transaction(fn, limits);
    },
  };
  return {
    deps: { ...deps, driver: wrapped } as RuntimeDeps,
    state,
    hung: hungGate.promise,
    resume: () => {
      state.mode = 'up';
      resumeGate.open();
      resumeGate = gate();
    },
  };
}
