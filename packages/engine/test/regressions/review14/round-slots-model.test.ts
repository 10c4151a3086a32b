import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { roundLimits } from '../../../src/runtime/run-statement-batches.ts';
import { StatementBatcher } from '../../../src/runtime/statement-batcher.ts';

/**
 * Review 14 (ADR 0070): the round batcher's slots against a model. The model test of ADR 0066 checks
 * each send's items; this one checks when a round may go at all, and what an unsent round's kinds do:
 * - a lone item with nothing out and nothing waiting is sent within its submit (the fast path);
 * - never more slots out than `maxInFlight`, and never more than `outWhileNoneSlow` (two, ADR 0076)
 *   plus one per slow slot (out for `slowMs`);
 * - nothing waits while a slot could go: once no slot is out, nothing is left waiting;
 * - a round never sent (no connection in time): its transitions and finishes go again with their
 *   own kind, its starts get the round's error and are never sent again (they waited all they may).
 */

type Mode = 'ok' | 'refuse' | 'lose' | 'notSent';
type Action =
  { kind: 'submit'; item: string } | { kind: 'release'; pick: number; mode: Mode } | { kind: 'wait'; ms: number };

interface Send {
  items: string[];
  slot: Slot;
  resolve: (results: string[]) => void;
  reject: (err: unknown) => void;
}
/** A slot: a round sent from the queue, out until every item it took settled (its resends happen in it). */
interface Slot {
  size: number;
  since: number;
  items: Set<string>;
}

const { maxInFlight, slowMs, outWhileNoneSlow } = roundLimits;
const kindOf = (item: string) => item.split(':')[0]!;
const keyOf = (item: string) => item.split(':')[1]!;
const unsent = new WeakSet<object>();
const settleMicrotasks = () => new Promise<void>((resolve) => setImmediate(resolve));

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom('start', 'transition', 'finish'), fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'))
      .map(([kind, key]) => ({ kind: 'submit' as const, item: `${kind}:${key}` })),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('release' as const),
      pick: fc.nat(7),
      mode: fc.constantFrom<Mode>('ok', 'ok', 'refuse', 'lose', 'notSent', 'notSent'),
    }),
  },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 40 }).map((ms) => ({ kind: 'wait' as const, ms })) },
);

async function runModel(actions: Action[], maxBatch: number): Promise<string[]> {
  const violations: string[] = [];
  const slots = new Set<Slot>();
  const open: Send[] = [];
  const waiting = new Set<string>();
  /** Items whose round went unsent, by what may happen to them next. */
  const unsentFate = new Map<string, 'resend' | 'error'>();
  const settled = new Map<string, { value?: string; err?: unknown }>();
  let n = 0;

  const slotOf = (item: string) => [...slots].find((s) => s.items.has(item));
  const batcher = new StatementBatcher<string, string>({
    ...roundLimits,
    maxBatch,
    key: keyOf,
    kindOf,
    notSent: (err, items) =>
      typeof err === 'object' && err !== null && unsent.has(err) && kindOf(items[0]!) !== 'start',
    send: (items) =>
      new Promise<string[]>((resolve, reject) => {
        const first = items.filter((i) => waiting.has(i));
        let slot: Slot;
        if (first.length > 0) {
          if (first.length !== items.length) violations.push(`${items.join(',')} mixes new and resent items`);
          const now = Date.now();
          const slow = [...slots].filter((s) => now - s.since >= slowMs).length;
          if (slots.size >= maxInFlight) violations.push(`${items.join(',')} sent with ${slots.size} slots out`);
          if (slots.size >= outWhileNoneSlow + slow)
            violations.push(`${items.join(',')} sent with ${slots.size} slots out, ${slow} of them slow`);
          slot = { size: items.length, since: now, items: new Set(items) };
          slots.add(slot);
          for (const item of items) waiting.delete(item);
        } else {
          const of = new Set(items.map(slotOf));
          if (of.size !== 1 || of.has(undefined)) violations.push(`${items.join(',')} resent outside their slot`);
          slot = [...of][0]!;
          for (const item of items)
            if (unsentFate.get(item) === 'error') violations.push(`${item} sent again after its round went unsent`);
        }
        open.push({ items, slot, resolve, reject });
      }),
  });

  const done = (item: string, result: { value?: string; err?: unknown }) => {
    if (settled.has(item)) violations.push(`${item} settled twice`);
    settled.set(item, result);
  };
  /**
   * An item's last send returned: it leaves its slot then, before its caller hears (the batcher
   * frees a slot, and may send from the queue, before the items' callers run).
   */
  const leave = (item: string) => {
    const slot = slotOf(item);
    slot?.items.delete(item);
    if (slot?.items.size === 0) slots.delete(slot);
  };
  const submit = (base: string) => {
    const item = `${base}:${n++}`;
    const idle = slots.size === 0 && waiting.size === 0;
    const sentBefore = open.length;
    waiting.add(item);
    void batcher.submit(item).then(
      (value) => done(item, { value }),
      (err: unknown) => done(item, { err }),
    );
    // The fast path: sent within the submit.
    if (idle && (open.length !== sentBefore + 1 || open.at(-1)!.items.join() !== item))
      violations.push(`${item} submitted with nothing out was not sent at once`);
  };
  const release = (send: Send, mode: Mode) => {
    open.splice(open.indexOf(send), 1);
    const { items } = send;
    const several = items.length > 1;
    if (mode === 'notSent' && new Set(items.map(kindOf)).size > 1) {
      for (const item of items) {
        unsentFate.set(item, kindOf(item) === 'start' ? 'error' : 'resend');
        if (kindOf(item) === 'start') leave(item);
      }
      const err = new Error('timeout exceeded when trying to connect');
      unsent.add(err);
      send.reject(err);
      return;
    }
    // Refused, several items go again alone in the slot; otherwise this was their last send.
    if (mode !== 'refuse' || !several) for (const item of items) leave(item);
    if (mode === 'ok') send.resolve(items.map((item) => `done ${item}`));
    else if (mode === 'refuse')
      send.reject(Object.assign(new Error('deadlock detected'), { code: '40P01', severity: 'ERROR' }));
    else send.reject(new Error('Connection terminated unexpectedly'));
  };

  for (const a of actions) {
    if (a.kind === 'submit') submit(a.item);
    else if (a.kind === 'release') {
      if (open.length > 0) release(open[a.pick % open.length]!, a.mode);
    } else await vi.advanceTimersByTimeAsync(a.ms);
    await settleMicrotasks();
    if (slots.size === 0 && waiting.size > 0) violations.push(`${[...waiting].join(',')} wait with nothing out`);
  }
  for (let rounds = 0; open.length > 0 && rounds < 1_000; rounds++) {
    release(open[0]!, 'ok');
    await settleMicrotasks();
  }
  for (let i = 0; i < n; i++)
    if (![...settled.keys()].some((k) => k.endsWith(`:${i}`))) violations.push(`#${i} never settled`);
  for (const [item, fate] of unsentFate) {
    const got = settled.get(item);
    if (fate === 'error' && !(typeof got?.err === 'object' && got.err !== null && unsent.has(got.err)))
      violations.push(`${item} should have had its unsent round's error`);
  }
  return violations;
}

describe('the round batcher’s slots against a model (review 14)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([1, 3, 64])(
    'the fast path, the slot limits and the second statement rule hold, and an unsent round’s starts get its error (maxBatch %i)',
    async (maxBatch) => {
      await fc.assert(
        fc.asyncProperty(fc.array(action, { maxLength: 80 }), async (actions) => {
          expect(await runModel(actions, maxBatch)).toEqual([]);
        }),
        { numRuns: 300 },
      );
    },
  );
});
