import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../src/create-engine.ts';
import { defineAction, defineFlow, type ActionDefinition, type Json } from '../src/index.ts';
import { acquireLock } from '../src/store/acquire-lock.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

let release: () => void = () => undefined;
let executions = 0;
const slow = defineAction({
  name: 'slow',
  run: async () => {
    executions += 1;
    await new Promise<void>((r) => (release = r));
    return { ok: true };
  },
});
const quick = defineAction({
  name: 'quick',
  run: async (i: { fail: boolean }) => {
    if (i.fail) throw new Error('nope');
    return { ok: true };
  },
});
const undo = defineAction({ name: 'undo', run: async () => ({ undone: true }) });
const slowFlow = defineFlow({ name: 'slow-flow', version: 1, run: async (ctx) => ctx.action(slow, null) });
const eventful = defineFlow({
  name: 'eventful',
  version: 1,
  run: async (ctx, fail: boolean) => {
    try {
      await ctx.action(quick, { fail: false }).compensateWith(undo, () => null);
      return await ctx.action(quick, { fail });
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe(`events, overlap locks and graceful shutdown (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [slowFlow, eventful],
      actions: [slow, quick, undo],
      config: { locks: { enabled: true, action_ttl_seconds: 60 } },
    });
  });
  afterAll(async () => {
    release();
    await t.closeAll();
  });

  it('typed events report starts, completions, failures, the rollback and the finish, and a throwing listener breaks nothing', async () => {
    const seen: string[] = [];
    const offs = [
      t.engine.events.on('action.started', (e) => void seen.push(`started ${e.name}#${e.sequence}`)),
      t.engine.events.on('action.completed', (e) => void seen.push(`completed ${e.name}#${e.sequence}`)),
      t.engine.events.on(
        'action.failed',
        (e) => void seen.push(`failed ${e.name}#${e.sequence} retry=${String(e.willRetry)}`),
      ),
      t.engine.events.on('compensation.started', (e) => void seen.push(`rollback level ${e.level} (${e.steps})`)),
      t.engine.events.on('compensation.step_started', (e) => void seen.push(`compensating ${e.name}`)),
      t.engine.events.on('run.finished', (e) => void seen.push(`finished ${e.status}`)),
      t.engine.events.on('action.completed', () => {
        throw new Error('a buggy listener');
      }),
    ];
    const d = await t.runToCompletion(eventful, true);
    offs.forEach((off) => off());
    expect(d.run.status).toBe('Compensated');
    expect(seen).toEqual([
      'started quick#1',
      'completed quick#1',
      'started quick#2',
      'failed quick#2 retry=false',
      'rollback level 1 (1)',
      'compensating undo',
      'finished Compensated',
    ]);
  });

  it('with locks enabled, the overlap lock is held while a step runs, refused to a rival, and released with the outcome', async () => {
    const before = executions;
    const { runId } = await t.engine.startFlow(slowFlow, null);
    const row = await waitFor(
      'the step row',
      async () => (await t.db.prisma.actionRun.findFirst({ where: { run_id: runId } })) ?? undefined,
    );
    // The engine took the lock for its own claim; a rival cannot take it while it is held.
    expect(
      await acquireLock(t.db.prisma, {
        key: `step:action_runs:${row.id}`,
        owner: 'rival',
        ttlSeconds: 60,
        now: t.clock.now(),
      }),
    ).toBe(false);
    await waitFor('the step to run', async () => (executions > before ? true : undefined));
    release();
    expect((await t.drive(runId, { skipTime: false })).run.status).toBe('Completed');
    expect(await t.db.prisma.lock.count({ where: { key: `step:action_runs:${row.id}` } })).toBe(0);
  });

  it('a duplicate that finds the lock held goes back to the queue instead of running', async () => {
    const before = executions;
    const { runId } = await t.engine.startFlow(slowFlow, null);
    await waitFor('the step to run', async () => (executions > before ? true : undefined));
    await t.faults.duplicateDelivery(runId, 2);
    await new Promise((r) => setTimeout(r, 200));
    expect(executions).toBe(before + 1);
    // The duplicates were released back to the queue at the lock, before reaching the claim.
    expect(await t.db.prisma.anomalyLog.count({ where: { run_id: runId, code: 'claim_lost' } })).toBe(0);
    release();
    expect((await t.drive(runId, { skipTime: false })).run.status).toBe('Completed');
    expect(executions).toBe(before + 1);
  });

  it('stopping the workers drains in-flight work within the bound, and reports when it could not', async () => {
    const w = createEngine({
      db: t.db,
      flows: [slowFlow],
      actions: [slow] as ActionDefinition<never, Json>[],
      clock: t.clock,
      logger: t.engine.runtime.logger,
      config: { worker: { poll_interval_ms: 10 } },
    });
    await t.engine.stopWorkers();
    w.startWorkers();
    const before = executions;
    const { runId } = await w.startFlow(slowFlow, null);
    await waitFor('the step to run', async () => (executions > before ? true : undefined));
    expect(await w.stopWorkers(100)).toEqual({ drained: false });
    release();
    // Only the stopped pool's in-flight work can finish the run (no other pool runs here). It takes
    // 30-110 ms under load (4 busy loops): a fixed 50 ms wait passed only when the read itself came late.
    const d = await waitFor('the stopped pool to finish its in-flight run', async () => {
      const r = await t.engine.getRun(runId);
      return r?.run.status === 'Completed' ? r : undefined;
    });
    expect(d.run.status).toBe('Completed');
    const w2 = createEngine({
      db: t.db,
      flows: [slowFlow],
      actions: [slow] as ActionDefinition<never, Json>[],
      clock: t.clock,
      config: { worker: { poll_interval_ms: 10 } },
      logger: t.engine.runtime.logger,
    });
    w2.startWorkers();
    const { runId: second } = await w2.startFlow(slowFlow, null);
    await waitFor('the second step to run', async () => (executions > before + 1 ? true : undefined));
    const stopping = w2.stopWorkers(5000);
    release();
    expect(await stopping).toEqual({ drained: true });
    expect((await t.engine.getRun(second))?.run.status).toBe('Completed');
    t.engine.startWorkers();
  });
});
