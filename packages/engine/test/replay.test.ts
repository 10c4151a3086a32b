import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../src/create-engine.ts';
import { defineAction, defineFlow, type ActionDefinition, type Json } from '../src/index.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';

const ran: string[] = [];
const act = (name: string) => defineAction({ name, run: async (i: { n: number }) => (ran.push(name), { n: i.n }) });
const a = act('step-a');
const b = act('step-b');
const renamed = act('step-b-renamed');

const gate = defineFlow({
  name: 'gated',
  version: 1,
  run: async (ctx) => {
    const when = ctx.now();
    const roll = ctx.random();
    const id = ctx.uuid();
    await ctx.action(a, { n: 1 });
    await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    await ctx.action(b, { n: 2 });
    return { when: when.toISOString(), roll, id };
  },
});
/** The same flow after a deploy that renamed its second step. */
const gateRenamed = defineFlow({
  name: 'gated',
  version: 2,
  run: async (ctx) => {
    ctx.now();
    ctx.random();
    ctx.uuid();
    await ctx.action(a, { n: 1 });
    await ctx.action(renamed, { n: 2 });
    return null;
  },
});

describe(`replay and the history contract (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [gate], actions: [a, b, renamed] });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('recorded steps are not run again on replay, and now/random/uuid return their recorded values', async () => {
    const { runId } = await t.engine.startFlow(gate, null);
    const parked = await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    const values = parked.actions.filter((s) => s.kind === 'value').map((s) => [s.name, s.output]);
    expect(values.map((v) => v[0])).toEqual(['now', 'random', 'uuid']);
    // Several more replays (duplicate wakes) before the signal: nothing re-runs, nothing new is recorded.
    await t.faults.duplicateDelivery(runId, 3);
    await new Promise((r) => setTimeout(r, 300));
    expect(ran.filter((x) => x === 'step-a')).toHaveLength(1);
    await t.engine.signal(runId, 'go');
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('Completed');
    expect(ran.filter((x) => x === 'step-a')).toHaveLength(1);
    const out = done.run.output as { when: string; roll: number; id: string };
    expect([out.when, out.roll, out.id]).toEqual(values.map((v) => v[1]));
  });

  it('a renamed step makes the run replay-blocked: open, visible with the reason, and the wrong step never runs', async () => {
    const { runId } = await t.engine.startFlow(gate, null);
    await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    // Deploy: a new engine with the renamed step takes over this database.
    await t.engine.stopWorkers();
    const deployed = createEngine({
      db: t.db,
      flows: [gateRenamed],
      actions: [a, b, renamed] as ActionDefinition<never, Json>[],
      clock: t.clock,
      config: { worker: { poll_interval_ms: 10 }, logging: { anomaly_level: null } },
      logger: (await import('pino')).pino({ level: 'silent' }),
    });
    deployed.startWorkers();
    await t.faults.duplicateDelivery(runId, 1);
    let detail = await deployed.getRun(runId);
    for (let i = 0; i < 200 && !detail?.run.stuckReason; i++) {
      await new Promise((r) => setTimeout(r, 10));
      detail = await deployed.getRun(runId);
    }
    await deployed.stopWorkers();
    expect(detail?.run.status).toBe('Waiting');
    expect(detail?.run.stuckReason).toMatch(
      /^replay_blocked: step 5 is recorded as signal "go" but the code now asks for action "step-b-renamed"/,
    );
    expect(ran).not.toContain('step-b-renamed');
    // Repairable: the original code takes it back and finishes it.
    t.engine.startWorkers();
    await t.engine.signal(runId, 'go');
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('Completed');
    expect(done.run.stuckReason).toBeNull();
  });
});
