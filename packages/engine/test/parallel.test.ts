import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../src/index.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';

let inFlight = 0;
let maxInFlight = 0;
let allIn: () => void = () => undefined;
let allInFlight = new Promise<void>((r) => (allIn = r));
const slow = defineAction({
  name: 'slow-double',
  run: async (i: { n: number; fail?: boolean }) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    if (inFlight === 3) allIn();
    // Each branch waits (up to 10 s, so a sequential engine still finishes) until all three are in
    // flight: concurrency is observed, not inferred from how long a sleep was.
    await Promise.race([allInFlight, new Promise((r) => setTimeout(r, 10_000))]);
    inFlight -= 1;
    if (i.fail) throw new Error(`branch ${i.n} failed`);
    return { n: i.n * 2 };
  },
});
const undo = defineAction({ name: 'undo-double', run: async (i: { n: number }) => ({ undone: i.n }) });

const fanOut = defineFlow({
  name: 'fan-out',
  version: 1,
  run: async (ctx, input: { failSecond: boolean }) => {
    try {
      const [a, b, c] = await ctx.parallel([
        ctx.action(slow, { n: 1 }).compensateWith(undo, (o) => ({ n: o.n })),
        ctx.action(slow, { n: 2, fail: input.failSecond }).compensateWith(undo, (o) => ({ n: o.n })),
        ctx.action(slow, { n: 3 }).compensateWith(undo, (o) => ({ n: o.n })),
      ] as const);
      return { sum: a.n + b.n + c.n };
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe(`parallel blocks (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [fanOut], actions: [slow, undo] });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('runs its steps concurrently and returns their outputs in order', async () => {
    maxInFlight = 0;
    allInFlight = new Promise<void>((r) => (allIn = r));
    const d = await t.runToCompletion(fanOut, { failSecond: false });
    expect(d.run.output).toEqual({ sum: 12 });
    expect(maxInFlight).toBe(3);
    const block = d.actions.filter((s) => s.kind === 'action').map((s) => s.parallelBlock);
    expect(new Set(block).size).toBe(1);
    expect(block[0]).not.toBeNull();
  });

  it('a failing branch fails the block once the others settled; only the succeeded branches are compensated', async () => {
    const d = await t.runToCompletion(fanOut, { failSecond: true });
    expect(d.run.status).toBe('Compensated');
    expect(d.compensations.map((c) => [c.actionSequence, c.status]).sort()).toEqual([
      [1, 'Completed'],
      [3, 'Completed'],
    ]);
  });
});
