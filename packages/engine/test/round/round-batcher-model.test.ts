import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { roundLimits } from '../../src/runtime/run-statement-batches.ts';
import { StatementBatcher } from '../../src/runtime/statement-batcher.ts';

/**
 * ADR 0066: one batcher sends every kind of hot statement, a round carrying each kind's items as a
 * statement of its own in one transaction. Driven by random interleavings of submits of three kinds
 * (keys shared across kinds, as a run's transition and its finish share its id), rounds returning
 * (written, refused, answer lost, never sent for want of a connection) in any order, and time
 * passing. Checked at every send: no key in two rounds out; at most `maxBatch` items of a kind in a
 * round; an item sent a second time only alone after its statement of one kind was refused, with its
 * own kind (or alone) after its round of several kinds was refused or never sent; a key's items in
 * submit order. At the end every item settled
 * exactly once with its round's fate.
 */

type Mode = 'ok' | 'refuse' | 'lose' | 'notSent';
type Action =
  { kind: 'submit'; item: string } | { kind: 'release'; pick: number; mode: Mode } | { kind: 'wait'; ms: number };
type Fate = 'ok' | 'refused' | 'lost';
type State = 'queued' | 'out' | 'resend' | 'split' | 'regroup' | 'done';

interface Round {
  items: string[];
  resolve: (results: string[]) => void;
  reject: (err: unknown) => void;
}

class NotSent extends Error {}
const refusal = () => Object.assign(new Error('deadlock detected'), { code: '40P01', severity: 'ERROR' });
const lost = () => new Error('Connection terminated unexpectedly');
const settleMicrotasks = () => new Promise<void>((resolve) => setImmediate(resolve));

const kindOf = (item: string) => item.split(':')[0]!;
const keyOf = (item: string) => item.split(':')[1]!;

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom('start', 'transition', 'finish'), fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'))
      .map(([kind, key]) => ({ kind: 'submit' as const, item: `${kind}:${key}` })),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('release' as const),
      pick: fc.nat(7),
      mode: fc.constantFrom<Mode>('ok', 'ok', 'ok', 'refuse', 'lose', 'notSent'),
    }),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 40 }).map((ms) => ({ kind: 'wait' as const, ms })) },
);

async function runModel(actions: Action[], maxBatch: number): Promise<string[]> {
  const violations: string[] = [];
  const state = new Map<string, State>();
  const expected = new Map<string, Fate>();
  const settled = new Map<string, { value?: string; err?: unknown }>();
  const byKey = new Map<string, string[]>();
  const open: Round[] = [];
  let n = 0;

  const batcher = new StatementBatcher<string, string>({
    ...roundLimits,
    maxBatch,
    key: keyOf,
    kindOf,
    notSent: (err) => err instanceof NotSent,
    send: (items) =>
      new Promise<string[]>((resolve, reject) => {
        const kinds = new Set(items.map(kindOf));
        const again = items.filter((i) => state.get(i) !== 'queued');
        if (again.length > 0) {
          const alone = items.length === 1 && ['resend', 'regroup'].includes(state.get(items[0]!)!);
          const ownKind = kinds.size === 1 && items.every((i) => ['split', 'regroup'].includes(state.get(i)!));
          if (!alone && !ownKind) violations.push(`${items.join(',')} sent again (${again.join(',')})`);
        }
        for (const kind of kinds)
          if (items.filter((i) => kindOf(i) === kind).length > maxBatch)
            violations.push(`more than ${maxBatch} ${kind} items in ${items.join(',')}`);
        for (const item of items) {
          for (const other of open)
            if (other.items.some((o) => keyOf(o) === keyOf(item)))
              violations.push(`${item} sent while ${other.items.join(',')} is out`);
          const list = byKey.get(keyOf(item))!;
          for (const earlier of list.slice(0, list.indexOf(item)))
            if (state.get(earlier) !== 'done') violations.push(`${item} sent before ${earlier} settled`);
          state.set(item, 'out');
        }
        open.push({ items, resolve, reject });
      }),
  });

  const submit = (base: string) => {
    const item = `${base}:${n++}`;
    const list = byKey.get(keyOf(item)) ?? [];
    byKey.set(keyOf(item), list);
    list.push(item);
    state.set(item, 'queued');
    void batcher.submit(item).then(
      (value) => (settled.has(item) ? violations.push(`${item} settled twice`) : settled.set(item, { value })),
      (err: unknown) => (settled.has(item) ? violations.push(`${item} settled twice`) : settled.set(item, { err })),
    );
  };

  const release = (round: Round, mode: Mode) => {
    open.splice(open.indexOf(round), 1);
    const { items } = round;
    const settle = (fate: Fate) => {
      for (const item of items) {
        state.set(item, 'done');
        expected.set(item, fate);
      }
    };
    const kinds = new Set(items.map(kindOf)).size;
    // Only a round of several kinds can go unsent (a lone kind waits for a connection under its own rules).
    if (mode === 'notSent' && kinds > 1) {
      for (const item of items) state.set(item, 'split');
      round.reject(new NotSent('no connection'));
    } else if (mode === 'ok') {
      settle('ok');
      round.resolve(items.map((item) => `done ${item}`));
    } else if (mode === 'refuse') {
      if (items.length === 1) settle('refused');
      else for (const item of items) state.set(item, kinds > 1 ? 'regroup' : 'resend');
      round.reject(refusal());
    } else {
      settle('lost');
      round.reject(lost());
    }
  };

  for (const a of actions) {
    if (a.kind === 'submit') submit(a.item);
    else if (a.kind === 'release') {
      if (open.length > 0) release(open[a.pick % open.length]!, a.mode);
    } else await vi.advanceTimersByTimeAsync(a.ms);
    await settleMicrotasks();
  }
  for (let rounds = 0; open.length > 0 && rounds < 1_000; rounds++) {
    release(open[0]!, 'ok');
    await settleMicrotasks();
  }
  for (const [item, s] of state) {
    if (s !== 'done') violations.push(`${item} never sent (left ${s})`);
    const got = settled.get(item);
    const fate = expected.get(item);
    if (!got) violations.push(`${item} never settled`);
    else if (fate === 'ok' && got.value !== `done ${item}`) violations.push(`${item} got ${String(got.value)}`);
    else if (fate === 'lost' && (got.err as Error | undefined)?.message !== lost().message)
      violations.push(`${item} should have lost its answer`);
    else if (fate === 'refused' && (got.err as { code?: string } | undefined)?.code !== '40P01')
      violations.push(`${item} should have been refused`);
  }
  return violations;
}

describe('the round batcher against a model of ADR 0066', () => {
  beforeEach(() => {
    // Date too: a statement turns slow by the batcher's reading of the clock (ADR 0097), which must be the model's.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([1, 2])(
    'kinds share rounds, at most %i of a kind each, a key in one round at a time, every item settled once with its fate',
    async (maxBatch) => {
      await fc.assert(
        fc.asyncProperty(fc.array(action, { maxLength: 60 }), async (actions) => {
          expect(await runModel(actions, maxBatch)).toEqual([]);
        }),
        { numRuns: 300 },
      );
    },
  );
});
