import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineFlow } from '../../../src/definitions/define-flow.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { untilEnded } from './support/until-ended.ts';

/**
 * Review 49 (4). 1,000 signals sent to one run before it reads them: each delivered once, in the order
 * sent (signals of one name are consumed first in, first out: schema.prisma). And a run of 300 durable
 * timers in a row, and one that races 200 signal waits against their timeouts: each wait resolves once.
 */
const inbox = defineFlow({
  name: 'r49.inbox',
  version: 1,
  run: async (ctx, i: { n: number }) => {
    const got: number[] = [];
    for (let k = 0; k < i.n; k++)
      got.push((await ctx.awaitSignal<{ k: number }>('item', { timeoutSeconds: 86_400 }))?.k ?? -1);
    return { got };
  },
});
const sleeper = defineFlow({
  name: 'r49.sleeper',
  version: 1,
  run: async (ctx, i: { n: number }) => {
    for (let k = 0; k < i.n; k++) await ctx.sleep(60);
    return { slept: i.n };
  },
});
const timeouts = defineFlow({
  name: 'r49.timeouts',
  version: 1,
  run: async (ctx, i: { n: number }) => {
    const got: (number | null)[] = [];
    for (let k = 0; k < i.n; k++)
      got.push((await ctx.awaitSignal<{ k: number }>('maybe', { timeoutSeconds: 30 }))?.k ?? null);
    return { got };
  },
});

describe(`many signals and timers on one run (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [inbox, sleeper, timeouts], actions: [] });
  });
  afterAll(async () => {
    await t?.closeAll();
  });

  it(
    '1,000 signals sent before the run reads them are each delivered once, in the order sent',
    { timeout: 300_000 },
    async () => {
      const n = 1000;
      const { runId } = await t.engine.startFlow(inbox, { n });
      for (let k = 0; k < n; k++) await t.engine.signal(runId, 'item', { k });
      const run = await untilEnded(t, runId, 280_000);
      expect(run.status).toBe('Completed');
      expect(run.output).toEqual({ got: Array.from({ length: n }, (_, k) => k) });
      const signals = await t.db.prisma.signal.findMany({ where: { run_id: runId }, orderBy: { seq: 'asc' } });
      expect(signals.filter((s) => s.status !== 'Consumed')).toEqual([]);
      expect(new Set(signals.map((s) => s.consumed_by_sequence)).size).toBe(n);
      const bySeq = signals.map((s) => s.consumed_by_sequence ?? 0);
      expect(bySeq).toEqual([...bySeq].sort((a, b) => a - b));
    },
  );

  it('300 durable timers in a row each fire once', { timeout: 300_000 }, async () => {
    const n = 300;
    const done = await t.runToCompletion(sleeper, { n }, { timeoutMs: 280_000 });
    expect(done.run.status).toBe('Completed');
    const timers = await t.db.prisma.timer.findMany({ where: { run_id: done.run.id } });
    expect(timers).toHaveLength(n);
    expect(timers.filter((x) => x.status !== 'Fired')).toEqual([]);
  });

  it(
    '200 signal waits racing their timeouts each resolve once, the sent ones with their payload',
    { timeout: 300_000 },
    async () => {
      const n = 200;
      const { runId } = await t.engine.startFlow(timeouts, { n });
      // Every third wait gets its signal before it times out; the rest time out (the kit skips the clock).
      for (let k = 0; k < n; k += 3) await t.engine.signal(runId, 'maybe', { k });
      const done = await t.drive(runId, { timeoutMs: 280_000 });
      expect(done.run.status).toBe('Completed');
      const got = (done.run.output as { got: (number | null)[] }).got;
      expect(got).toHaveLength(n);
      // Signals already sent are consumed first in, first out, by the first waits.
      const sent = Array.from({ length: Math.ceil(n / 3) }, (_, j) => j * 3);
      expect(got.slice(0, sent.length)).toEqual(sent);
      expect(got.slice(sent.length).every((v) => v === null)).toBe(true);
    },
  );
});
