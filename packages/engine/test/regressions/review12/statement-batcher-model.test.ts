import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runStatementLimits } from '../../../src/runtime/run-statement-batches.ts';
import { StatementBatcher, type StatementBatcherOptions } from '../../../src/runtime/statement-batcher.ts';

/**
 * ADR 0059 reviewed (ADR 0061): the batcher driven by random interleavings of submits, statements
 * returning (written, refused by the server, answer lost) in any order, and time passing, against a
 * model of what it may do. Checked at every statement it sends: no key in two statements out at
 * once; an item sent a second time only alone, after the server refused its batch; a key's items
 * sent in the order they were submitted, each after the one before it settled; no more statements
 * out than allowed (one while none is slow, a second only as full as the fullest out, with
 * `secondFrom`, which the engine's batchers of every kind, starts included, are given: ADR 0063). At
 * the end, with every statement let go: every item settled exactly once, with the fate of its
 * statement (nothing left waiting on a pump that never ran again).
 */

type Mode = 'ok' | 'refuse' | 'lose';
type Action =
  | { kind: 'submit'; key: string }
  /** A submit made from inside the next send, while the batcher is still sending. */
  | { kind: 'submitWhileSending'; key: string }
  | { kind: 'release'; pick: number; mode: Mode }
  | { kind: 'wait'; ms: number };
type Fate = 'ok' | 'refused' | 'lost';

interface Slot {
  size: number;
  startedAt: number;
  items: string[];
}
interface Statement {
  items: string[];
  slot: Slot;
  resolve: (results: string[]) => void;
  reject: (err: unknown) => void;
}

const refusal = () => Object.assign(new Error('invalid byte sequence'), { code: '22021', severity: 'ERROR' });
const lost = () => new Error('Connection terminated unexpectedly');
const settleMicrotasks = () => new Promise<void>((resolve) => setImmediate(resolve));

const keys = fc.constantFrom('a', 'b', 'c', 'd', 'e');
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 5, arbitrary: keys.map((k) => ({ kind: 'submit' as const, key: k })) },
  { weight: 1, arbitrary: keys.map((k) => ({ kind: 'submitWhileSending' as const, key: k })) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('release' as const),
      pick: fc.nat(7),
      mode: fc.constantFrom<Mode>('ok', 'ok', 'ok', 'refuse', 'lose'),
    }),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 40 }).map((ms) => ({ kind: 'wait' as const, ms })) },
);

type Limits = Omit<StatementBatcherOptions<string, string>, 'send' | 'key'>;

async function runModel(limits: Limits, actions: Action[]): Promise<string[]> {
  const violations: string[] = [];
  const state = new Map<string, 'queued' | 'out' | 'resend' | 'done'>();
  const slotOf = new Map<string, Slot>();
  const expected = new Map<string, Fate>();
  const settled = new Map<string, { value?: string; err?: unknown }>();
  const open: Statement[] = [];
  const submittedOf = new Map<string, string[]>();
  const whileSending: string[] = [];
  let elapsed = 0;

  const submit = (key: string) => {
    const list = submittedOf.get(key) ?? [];
    submittedOf.set(key, list);
    const item = `${key}:${list.length}`;
    list.push(item);
    state.set(item, 'queued');
    void batcher.submit(item).then(
      (value) => (settled.has(item) ? violations.push(`${item} settled twice`) : settled.set(item, { value })),
      (err: unknown) => (settled.has(item) ? violations.push(`${item} settled twice`) : settled.set(item, { err })),
    );
  };

  const slotOpen = (slot: Slot) => slot.items.some((i) => state.get(i) !== 'done');

  const batcher = new StatementBatcher<string, string>({
    ...limits,
    key: (item) => item.split(':')[0]!,
    send: (items) =>
      new Promise<string[]>((resolve, reject) => {
        const isResend = items.length === 1 && state.get(items[0]!) === 'resend';
        for (const item of items) {
          const was = state.get(item);
          if (!(isResend || was === 'queued')) violations.push(`${item} sent while ${was}`);
          const [key, n] = item.split(':') as [string, string];
          for (const other of open)
            if (other.items.some((o) => o.startsWith(`${key}:`)))
              violations.push(`${item} sent while ${other.items.join(',')} is out`);
          for (const earlier of submittedOf.get(key)!.slice(0, Number(n)))
            if (state.get(earlier) !== 'done') violations.push(`${item} sent before ${earlier} settled`);
        }
        let slot: Slot;
        if (isResend) slot = slotOf.get(items[0]!)!;
        else {
          const others = [...new Set(Array.from(slotOf.values()))].filter(slotOpen);
          if (others.length + 1 > limits.maxInFlight) violations.push(`${others.length + 1} statements out`);
          const noneSlow = others.every((s) => elapsed - s.startedAt < limits.slowMs);
          if (noneSlow && others.length > 0) {
            if (limits.secondFrom === undefined)
              violations.push(`${items.join(',')} went beside ${others.length}, none slow, without secondFrom`);
            else if (others.length > 1) violations.push(`a third statement (${items.join(',')}) while none is slow`);
            else if (items.length < Math.max(limits.secondFrom, others[0]!.size))
              violations.push(`a second of ${items.length} beside one of ${others[0]!.size}`);
          }
          slot = { size: items.length, startedAt: elapsed, items: [...items] };
          for (const item of items) slotOf.set(item, slot);
        }
        for (const item of items) state.set(item, 'out');
        open.push({ items, slot, resolve, reject });
        const next = whileSending.shift();
        if (next !== undefined) submit(next);
      }),
  });

  const release = (statement: Statement, mode: Mode) => {
    open.splice(open.indexOf(statement), 1);
    const { items } = statement;
    const settle = (fate: Fate) => {
      for (const item of items) {
        state.set(item, 'done');
        expected.set(item, fate);
      }
    };
    if (mode === 'ok') {
      settle('ok');
      statement.resolve(items.map((item) => `done ${item}`));
    } else if (mode === 'lose') {
      settle('lost');
      statement.reject(lost());
    } else {
      // A refused batch wrote nothing: each item is sent again alone. A refused lone item is its fate.
      if (items.length === 1) settle('refused');
      else for (const item of items) state.set(item, 'resend');
      statement.reject(refusal());
    }
  };

  for (const a of actions) {
    if (a.kind === 'submit') submit(a.key);
    else if (a.kind === 'submitWhileSending') whileSending.push(a.key);
    else if (a.kind === 'release') {
      if (open.length > 0) release(open[a.pick % open.length]!, a.mode);
    } else {
      // A millisecond at a time, so a statement sent when one turns slow sees the model's clock at that moment.
      for (let ms = 0; ms < a.ms; ms++) {
        elapsed += 1;
        await vi.advanceTimersByTimeAsync(1);
      }
    }
    await settleMicrotasks();
  }
  // Let every statement go, as often as the batcher sends one; then nothing may be left waiting.
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
    else if (fate === 'refused' && (got.err as { code?: string } | undefined)?.code !== '22021')
      violations.push(`${item} should have been refused`);
  }
  return violations;
}

describe('StatementBatcher against a model of ADR 0045 and ADR 0059 (review 12)', () => {
  beforeEach(() => {
    // Date too: a statement turns slow by the batcher's reading of the clock (ADR 0097), which must be the model's.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    // The limits the engine's batchers send under (ADR 0063: transitions, finishes and starts alike),
    // with smaller statements so that the model's five keys fill them.
    ["starts, transitions and finishes (the engine's limits)", { ...runStatementLimits, maxBatch: 3 }],
    ['ADR 0045 alone (no second before one is slow)', { maxInFlight: 4, slowMs: 25, maxBatch: 3 }],
    ['a limit of two, batches of one', { maxInFlight: 2, slowMs: 25, maxBatch: 1, secondFrom: 1 }],
  ] as const)(
    '%s: a key is in one statement at a time, in its order, every item settled once with its fate, none left waiting',
    async (_name, limits) => {
      await fc.assert(
        fc.asyncProperty(fc.array(action, { maxLength: 60 }), async (actions) => {
          expect(await runModel(limits, actions)).toEqual([]);
        }),
        { numRuns: 400 },
      );
    },
  );
});
