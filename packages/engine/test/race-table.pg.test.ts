import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../src/create-engine.ts';
import { createDatabase } from '../src/db/create-database.ts';
import type { Database } from '../src/db/database.ts';
import { defineAction, defineFlow, type ActionDefinition, type Json } from '../src/index.ts';
import { enqueueJob } from '../src/store/enqueue-job.ts';
import { TestClock } from '../src/testing/test-clock.ts';
import { openTestDatabase } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

/**
 * Seed 000's race table, row by row, with three workers (engines with their own connection pools)
 * on one real PostgreSQL database. Each scenario runs many times.
 */
const ROUNDS = 8;
const executions = new Map<string, number>();
const gates = new Map<string, Promise<void>>();
const count = (key: string) => executions.set(key, (executions.get(key) ?? 0) + 1);

const flaky = defineAction({
  name: 'flaky-once',
  retry: { maxAttempts: 3, backoff: { initialMs: 60_000, jitter: false } },
  run: async (i: { key: string }) => {
    count(i.key);
    if ((executions.get(i.key) ?? 0) === 1) throw new Error('first try fails');
    return { ok: true };
  },
});
const gated = defineAction({
  name: 'gated',
  run: async (i: { key: string }) => {
    count(i.key);
    await gates.get(i.key);
    return { by: executions.get(i.key) ?? 0 };
  },
});
const flows = [
  defineFlow({ name: 'retrying', version: 1, run: async (ctx, key: string) => ctx.action(flaky, { key }) }),
  defineFlow({
    name: 'gated-reclaimable',
    version: 1,
    run: async (ctx, key: string) => ctx.action(gated, { key }).reclaimStaleAfter(30),
  }),
  defineFlow({ name: 'gated-plain', version: 1, run: async (ctx, key: string) => ctx.action(gated, { key }) }),
];

describe('seed 000 race table on a real PostgreSQL with three workers', () => {
  const clock = new TestClock();
  let main: Database & { url?: string };
  const extra: Database[] = [];
  const workers: Engine[] = [];
  beforeAll(async () => {
    main = await openTestDatabase({ poolSize: 8 });
    for (let i = 0; i < 2; i++)
      extra.push(await createDatabase({ kind: 'postgres', url: main.url ?? '', poolSize: 8 }));
    for (const db of [main, ...extra]) {
      const w = createEngine({
        db,
        flows,
        actions: [flaky, gated] as ActionDefinition<never, Json>[],
        clock,
        logger: pino({ level: 'silent' }),
        config: { worker: { poll_interval_ms: 10, concurrency: 4 }, logging: { anomaly_level: null } },
      });
      w.startWorkers();
      workers.push(w);
    }
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stopWorkers(2000)));
    for (const db of [...extra, main]) await db.close();
  });
  const engine = () => workers[0] as Engine;
  const run = (runId: string) => engine().getRun(runId);
  const settled = (runId: string) =>
    waitFor(`run ${runId} to finish`, async () => {
      const d = await run(runId);
      return d && !['Pending', 'Running', 'Waiting', 'Compensating'].includes(d.run.status) ? d : undefined;
    });
  const wakes = async (runId: string, n: number) => {
    for (let i = 0; i < n; i++) await enqueueJob(main.prisma, { kind: 'wake-run', runId, availableAt: new Date(0) });
  };
  const stepEvents = async (runId: string, type: string) =>
    main.prisma.flowEvent.count({ where: { run_id: runId, type } });

  it('a job left over from a superseded retry cycle does not run the step again', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const key = `retry-${round}`;
      const { runId } = await engine().startFlow('retrying', key);
      await waitFor('the retry to be scheduled', async () =>
        (await run(runId))?.actions[0]?.status === 'Failed' ? true : undefined,
      );
      await wakes(runId, 6); // stale wakes from the first cycle, spread over three workers
      await new Promise((r) => setTimeout(r, 100));
      expect(executions.get(key)).toBe(1);
      clock.advance(61_000);
      const d = await settled(runId);
      expect(d.run.status).toBe('Completed');
      expect(executions.get(key)).toBe(2);
      expect(d.actions[0]).toMatchObject({ status: 'Completed', attempts: 2 });
    }
  });

  it('a job racing a row the monitor just expired cannot overwrite Expired, and the step is not run again', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const key = `expire-${round}`;
      let open!: () => void;
      gates.set(key, new Promise<void>((r) => (open = r)));
      const { runId } = await engine().startFlow('gated-plain', key);
      const rowId = await waitFor('the step to run', async () =>
        executions.get(key) ? (await run(runId))?.actions[0]?.id : undefined,
      );
      // The monitor's conditional expiry write lands while the worker is still executing.
      const expired = await main.prisma.actionRun.updateMany({
        where: { id: rowId, status: 'Running' },
        data: { status: 'Expired' },
      });
      expect(expired.count).toBe(1);
      open();
      await wakes(runId, 3);
      const d = await settled(runId);
      expect(d.actions[0]).toMatchObject({ status: 'Expired', output: null });
      expect(d.run.status).toBe('Failed');
      expect(executions.get(key)).toBe(1);
      // The worker's late result is journaled, never recorded: rejected by the fence, or refused if
      // the run had already failed when it arrived (ADR 0011).
      const codes = await waitFor('the late result to be journaled', async () => {
        const found = (await main.prisma.anomalyLog.findMany({ where: { run_id: runId } })).map((a) => a.code);
        return found.some((c) => c === 'outcome_rejected' || c === 'write_refused') ? found : undefined;
      });
      expect(codes.filter((c) => c === 'outcome_rejected' || c === 'write_refused')).toHaveLength(1);
    }
  });

  it('a duplicate dispatched on top of a live one loses its claim; the step runs once', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const key = `dup-${round}`;
      let open!: () => void;
      gates.set(key, new Promise<void>((r) => (open = r)));
      const { runId } = await engine().startFlow('gated-plain', key);
      await waitFor('the step to run', async () => (executions.get(key) ? true : undefined));
      await wakes(runId, 6);
      await waitFor('the duplicates to lose their claims', async () =>
        (await main.prisma.anomalyLog.count({ where: { run_id: runId, code: 'claim_lost' } })) > 0 ? true : undefined,
      );
      open();
      const d = await settled(runId);
      expect(d.run.status).toBe('Completed');
      expect(executions.get(key)).toBe(1);
      expect(await stepEvents(runId, 'action.completed')).toBe(1);
      expect(await stepEvents(runId, 'run.completed')).toBe(1);
    }
  });

  it('a redelivery while the first attempt still runs (reclaim on): two executions, one recorded outcome', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const key = `redeliver-${round}`;
      let open!: () => void;
      gates.set(key, new Promise<void>((r) => (open = r)));
      const { runId } = await engine().startFlow('gated-reclaimable', key);
      await waitFor('the first attempt to run', async () => (executions.get(key) === 1 ? true : undefined));
      clock.advance(31_000); // the first worker now looks dead
      await wakes(runId, 3);
      await waitFor('a second execution', async () => ((executions.get(key) ?? 0) >= 2 ? true : undefined));
      open();
      const d = await settled(runId);
      expect(d.run.status).toBe('Completed');
      expect(executions.get(key)).toBe(2);
      expect(d.actions[0]).toMatchObject({ status: 'Completed', attempts: 2 });
      expect(await stepEvents(runId, 'action.completed')).toBe(1);
      expect(await stepEvents(runId, 'run.completed')).toBe(1);
      // The loser's result is journaled, never recorded: rejected by the fence while the run is open,
      // refused once the winner's outcome let the run finish (ADR 0011). The winner can finish the
      // run while the loser is still returning from its action: wait for the loser's journal.
      const lost = async () =>
        (await main.prisma.anomalyLog.findMany({ where: { run_id: runId } }))
          .map((a) => a.code)
          .filter((c) => c === 'outcome_rejected' || c === 'write_refused');
      await waitFor("the loser's result to be journaled", async () => ((await lost()).length > 0 ? true : undefined));
      expect(await lost()).toHaveLength(1);
      expect(executions.get(key)).toBe(2);
      expect(await stepEvents(runId, 'action.completed')).toBe(1);
    }
  });
});
