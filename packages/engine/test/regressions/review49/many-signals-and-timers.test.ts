import { setTimeout as sleep } from 'node:timers/promises';
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

  /**
   * Starts the pool and drives run `runId` to its end, jumping the test clock to the run's next wake as
   * soon as the run is Waiting with none of its jobs due or claimed (its one pending wake is a timer or a
   * signal's timeout in the future). The kit's drive() makes the same jump after three idle polls of the
   * whole queue, ~0.1 s per timer here; what is under test is each wait resolving once, not the kit.
   */
  const driveByWakes = async (runId: string, timeoutMs: number) => {
    t.engine.startWorkers();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const run = await t.db.prisma.flowRun.findUniqueOrThrow({
        where: { id: runId },
        select: { id: true, status: true, output: true },
      });
      if (!['Pending', 'Running', 'Waiting', 'Compensating'].includes(run.status)) return run;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for run ${runId} to end`);
      if (run.status === 'Waiting') {
        const jobs = await t.db.prisma.job.findMany({
          where: { run_id: runId },
          select: { available_at: true, locked_by: true },
          orderBy: { available_at: 'asc' },
        });
        const now = t.clock.now().getTime();
        if (jobs[0] && jobs.every((j) => j.locked_by === null && j.available_at.getTime() > now))
          t.clock.set(jobs[0].available_at);
      }
      // A short pause: each of the run's hundreds of waits is seen parked here before its wake is due.
      await sleep(5);
    }
  };

  it(
    '1,000 signals sent before the run reads them are each delivered once, in the order sent',
    { timeout: 300_000 },
    async () => {
      const n = 1000;
      const { runId } = await t.engine.startFlow(inbox, { n });
      // The first and the last through the API; the 998 between are written set-based as the API writes
      // each (the signal buffered in arrival order, its signal.sent event, a wake of the run due now):
      // 1,000 operator transactions one after another were half this test's time, and sending is not
      // what it attacks. No worker runs until untilEnded starts the pool: every signal is sent before the
      // run reads any. A seeded signal out of order would fail the order assertions below, not pass them.
      await t.engine.signal(runId, 'item', { k: 0 });
      await t.db.prisma.$transaction([
        t.db.prisma.$executeRaw`
          insert into "sagaflow"."signals" (run_id, name, payload)
          select ${runId}::uuid, 'item', jsonb_build_object('k', g) from generate_series(1, ${n - 2}) g order by g`,
        t.db.prisma.$executeRaw`
          insert into "sagaflow"."flow_events" (run_id, type, data)
          select run_id, 'signal.sent', jsonb_build_object('name', name, 'signal', id) from "sagaflow"."signals"
           where run_id = ${runId}::uuid and (payload->>'k')::int > 0 order by seq`,
        t.db.prisma.$executeRaw`
          insert into "sagaflow"."jobs" (kind, run_id, available_at)
          select 'wake-run', ${runId}::uuid, ${t.clock.now()}::timestamptz from generate_series(1, ${n - 2})`,
      ]);
      await t.engine.signal(runId, 'item', { k: n - 1 });
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
    const { runId } = await t.engine.startFlow(sleeper, { n });
    const done = await driveByWakes(runId, 280_000);
    expect(done.status).toBe('Completed');
    expect(done.output).toEqual({ slept: n });
    const timers = await t.db.prisma.timer.findMany({ where: { run_id: runId } });
    expect(timers).toHaveLength(n);
    expect(timers.filter((x) => x.status !== 'Fired')).toEqual([]);
  });

  it(
    '200 signal waits racing their timeouts each resolve once, the sent ones with their payload',
    { timeout: 300_000 },
    async () => {
      const n = 200;
      const { runId } = await t.engine.startFlow(timeouts, { n });
      // Every third wait gets its signal before it times out; the rest time out (the clock jumps to each).
      for (let k = 0; k < n; k += 3) await t.engine.signal(runId, 'maybe', { k });
      const done = await driveByWakes(runId, 280_000);
      expect(done.status).toBe('Completed');
      const got = (done.output as { got: (number | null)[] }).got;
      expect(got).toHaveLength(n);
      // Signals already sent are consumed first in, first out, by the first waits.
      const sent = Array.from({ length: Math.ceil(n / 3) }, (_, j) => j * 3);
      expect(got.slice(0, sent.length)).toEqual(sent);
      expect(got.slice(sent.length).every((v) => v === null)).toBe(true);
    },
  );
});
