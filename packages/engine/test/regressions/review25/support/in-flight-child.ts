import type { Database } from '../../../../src/db/database.ts';
import type { Json } from '../../../../src/definitions/define-action.ts';
import { defineAction, defineFlow, NonRetryableError } from '../../../../src/index.ts';
import { TestClock } from '../../../../src/testing/test-clock.ts';
import { bareEngine, gate } from '../../harness.ts';

let n = 0;

interface Held {
  reached: ReturnType<typeof gate>;
  release: ReturnType<typeof gate>;
}

/**
 * Review 25. A parent that books, then `await Promise.all([ctx.child(A, { cancellation: policy }), ctx.action(side)])`
 * with no catch: `side` failing for good fails the parent at once while A is open.
 *
 * Child A: `try { a1 (compensated by ua1); a2; (grandchild G: ctx.child(G)); a3 } catch { compensate; throw }`.
 * Any action's next execution can be held at a gate (`holdAction`), so the test can keep A's replay inside
 * a2 (its forward work) or inside ua1 (its compensation) while the parent's end commits. `a2Fails` makes a2
 * fail for good (A then compensates). Every execution is counted in `ran`.
 */
export function inFlightChild(
  db: Database,
  opts: { policy: 'propagate' | 'abandon'; grandchild?: boolean; a2Fails?: boolean },
) {
  n += 1;
  const tag = `review25-inflight-${n}`;
  const clock = new TestClock();
  const ran: Record<string, number> = {};
  const holds: Record<string, Held | null> = {};
  const act = (name: string, fails?: () => boolean) =>
    defineAction({
      name: `${tag}-${name}`,
      retry: { maxAttempts: 1 },
      run: async (input: Json) => {
        ran[name] = (ran[name] ?? 0) + 1;
        const held = holds[name];
        if (held) {
          holds[name] = null;
          held.reached.open();
          await held.release.promise;
        }
        if (fails?.()) throw new NonRetryableError(`${name} declined`);
        return `${name}:${JSON.stringify(input)}`;
      },
    });
  const book = act('book');
  const side = act('side', () => true);
  const a1 = act('a1');
  const ua1 = act('ua1');
  const a2 = act('a2', () => opts.a2Fails === true);
  const a3 = act('a3');
  const g1 = act('g1');
  const childG = defineFlow({ name: `${tag}-G`, version: 1, run: async (ctx, i: string) => ctx.action(g1, i) });
  const childA = defineFlow({
    name: `${tag}-A`,
    version: 1,
    run: async (ctx, i: string): Promise<Json> => {
      try {
        await ctx.action(a1, i).compensateWith(ua1, () => null);
        await ctx.action(a2, i).run();
        if (opts.grandchild) await ctx.child(childG, 'g');
        return await ctx.action(a3, i).run();
      } catch (err) {
        await ctx.compensate();
        throw err;
      }
    },
  });
  const parent = defineFlow({
    name: `${tag}-parent`,
    version: 1,
    run: async (ctx): Promise<Json> => {
      await ctx.action(book, null).run();
      return Promise.all([ctx.child(childA, 'a', { cancellation: opts.policy }), ctx.action(side, null).run()]);
    },
  });
  const e = bareEngine(db, {
    clock,
    flows: [parent, childA, childG],
    actions: [book, side, a1, ua1, a2, a3, g1],
  });
  return {
    e,
    clock,
    ran,
    /** Holds the next execution of `name` (book, side, a1, ua1, a2, a3, g1) at a gate. */
    holdAction(name: string) {
      const held: Held = { reached: gate(), release: gate() };
      holds[name] = held;
      return { reached: held.reached.promise, release: () => held.release.open() };
    },
    start: async () => (await e.startFlow(parent, null)).runId,
  };
}
