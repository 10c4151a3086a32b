import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/create-engine.ts';
import { defineAction, defineFlow, EngineError, type RepairCommand, type RunDetail } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';

/**
 * Review 38: the code of a flow changes under runs in flight, with the SAME version number (a deploy that
 * forgot to bump it) or a new one. A module switch is the deployed code: every replay runs the flow
 * function again, so flipping it and waking the run is what a restart with the new code does.
 */
const code = { variant: 'orig' as string, undoFails: true };
const ran: string[] = [];
const act = (name: string) =>
  defineAction({ name, run: async (input: { n: number }) => (ran.push(`${name}:${input.n}`), { n: input.n }) });
const a = act('r38s-a');
const b = act('r38s-b');
const c = act('r38s-c');
const x = act('r38s-x');
const p = act('r38s-p');
const q = act('r38s-q');
const r = act('r38s-r');
const undoA = act('r38s-undo-a');
const undoB = defineAction({
  name: 'r38s-undo-b',
  retry: { maxAttempts: 3, backoff: { initialMs: 3_600_000, maxMs: 3_600_000, jitter: false } },
  run: async () => {
    ran.push('r38s-undo-b');
    if (code.undoFails) throw new Error('the refund service is down');
    return null;
  },
});
const boom = defineAction({
  name: 'r38s-boom',
  run: async () => {
    throw new Error('the carrier refused the parcel');
  },
});
const flaky = defineAction({
  name: 'r38s-flaky',
  retry: { maxAttempts: 3, backoff: { initialMs: 3_600_000, maxMs: 3_600_000, jitter: false } },
  run: async (input: { n: number }) => {
    ran.push(`r38s-flaky:${input.n}`);
    if (code.undoFails) throw new Error('the downstream service is down');
    return { n: input.n };
  },
});

/** a (undone by undo-a), b, wait for go, c; each variant is a deploy of the same version 1. */
const linear = defineFlow({
  name: 'r38s-linear',
  version: 1,
  run: async (ctx) => {
    try {
      if (code.variant === 'clock-first') ctx.now();
      if (code.variant === 'reordered') {
        await ctx.action(b, { n: 2 });
        await ctx.action(a, { n: 1 }).compensateWith(undoA, () => ({ n: 1 }));
      } else {
        await ctx.action(a, { n: 1 }).compensateWith(undoA, () => ({ n: 1 }));
        await ctx.action(b, { n: 2 });
      }
      if (code.variant === 'inserted') await ctx.action(x, { n: 9 });
      if (code.variant === 'truncated') return 'short';
      await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
      await ctx.action(c, { n: 3 });
      return 'done';
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

/** A parallel block, then a wait. */
const fanned = defineFlow({
  name: 'r38s-fanned',
  version: 1,
  run: async (ctx) => {
    const block =
      code.variant === 'swapped'
        ? [ctx.action(q, { n: 2 }), ctx.action(p, { n: 1 })]
        : code.variant === 'widened'
          ? [ctx.action(p, { n: 1 }), ctx.action(r, { n: 7 }), ctx.action(q, { n: 2 })]
          : [ctx.action(p, { n: 1 }), ctx.action(q, { n: 2 })];
    await ctx.parallel(block);
    await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    return 'done';
  },
});

/** a (undo-a), b (undo-b, or no compensation in the variant), then a failing step: the rollback begins. */
const saga = defineFlow({
  name: 'r38s-saga',
  version: 1,
  run: async (ctx) => {
    try {
      await ctx.action(a, { n: 1 }).compensateWith(undoA, () => ({ n: 1 }));
      if (code.variant === 'no-undo-b') await ctx.action(b, { n: 2 });
      else await ctx.action(b, { n: 2 }).compensateWith(undoB, () => ({ n: 2 }));
      await ctx.action(boom, { n: 0 });
      return 'unreachable';
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

/** One step retried an hour later; the variant changes its input. */
const retried = defineFlow({
  name: 'r38s-retried',
  version: 1,
  run: async (ctx) => ctx.action(flaky, { n: code.variant === 'new-input' ? 99 : 1 }),
});

const terminal = ['Completed', 'Failed', 'Compensated', 'Cancelled', 'Expired', 'TimedOut', 'Terminated'];

describe(`a flow's code changed under runs in flight (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [linear, fanned, saga, retried],
      actions: [a, b, c, x, p, q, r, undoA, undoB, boom, flaky],
    });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  /** Runs `flow` on the original code until `parkedAt`, deploys `variant`, wakes it, and returns it blocked. */
  async function blockedAfterDeploy(
    flow: typeof linear | typeof fanned | typeof saga,
    variant: string,
    parkedAt: (d: RunDetail) => boolean,
  ): Promise<{ before: RunDetail; after: RunDetail; ranSince: string[] }> {
    code.variant = 'orig';
    t.engine.startWorkers();
    const { runId } = await t.engine.startFlow(flow, null);
    const before = await t.drive(runId, { skipTime: false, until: parkedAt });
    const mark = ran.length;
    code.variant = variant;
    await t.engine.kick(runId);
    const after = await t.drive(runId, {
      skipTime: false,
      until: (d) => d.run.stuckReason !== null || terminal.includes(d.run.status),
    });
    await t.engine.stopWorkers();
    return { before, after, ranSince: ran.slice(mark) };
  }
  const atSignal = (d: RunDetail) => d.run.waitingFor?.startsWith('signal') ?? false;
  const rows = (d: RunDetail) => d.actions.map((s) => [s.sequence, s.kind, s.name, s.status]);

  /** What a blocked run must be: open, stuck with the reason, nothing run or compensated, history as it was. */
  function expectBlocked(o: { before: RunDetail; after: RunDetail; ranSince: string[] }, reason: RegExp) {
    expect(o.after.run.status).toBe('Waiting');
    expect(o.after.run.stuckReason).toMatch(reason);
    expect(o.ranSince).toEqual([]);
    expect(o.after.compensations).toEqual([]);
    expect(rows(o.after)).toEqual(rows(o.before));
    expect(o.after.run.safeRepairs).toEqual(['run.kick', 'run.resume_from_step', 'run.terminate']);
    expect(o.after.events.filter((e) => e.type === 'run.stuck').map((e) => e.data)).toEqual([
      { reason: o.after.run.stuckReason },
    ]);
  }

  it('held: steps reordered under the same version block the run at the first step that differs, naming both', async () => {
    const o = await blockedAfterDeploy(linear, 'reordered', atSignal);
    expectBlocked(
      o,
      /^replay_blocked: step 1 is recorded as action "r38s-a" but the code now asks for action "r38s-b" \(flow r38s-linear v1\); deploy code that matches the record, then kick the run$/,
    );
    // Visible in the engine's listing of open runs.
    const listed = await t.engine.listRuns({ status: ['Waiting'], flowName: 'r38s-linear', limit: 100 });
    expect(listed.find((v) => v.id === o.after.run.id)?.stuckReason).toBe(o.after.run.stuckReason);
  });

  it('held: a step inserted before the wait the run is parked on blocks it at that wait', async () => {
    const o = await blockedAfterDeploy(linear, 'inserted', atSignal);
    expectBlocked(o, /^replay_blocked: step 3 is recorded as signal "go" but the code now asks for action "r38s-x"/);
  });

  it('held: a ctx.now() inserted before the recorded steps blocks the run at step 1', async () => {
    const o = await blockedAfterDeploy(linear, 'clock-first', atSignal);
    expectBlocked(o, /^replay_blocked: step 1 is recorded as action "r38s-a" but the code now asks for value "now"/);
  });

  it('held: a signal sent to a blocked run is kept, and the run takes it once matching code is back', async () => {
    const o = await blockedAfterDeploy(linear, 'reordered', atSignal);
    t.engine.startWorkers();
    await t.engine.signal(o.after.run.id, 'go');
    const still = await t.drive(o.after.run.id, {
      skipTime: false,
      until: (d) => d.run.stuckReason !== null && d.run.status === 'Waiting',
    });
    expect(rows(still)).toEqual(rows(o.before));
    code.variant = 'orig';
    await t.engine.kick(o.after.run.id);
    const done = await t.drive(o.after.run.id, { skipTime: false });
    await t.engine.stopWorkers();
    expect(done.run).toMatchObject({ status: 'Completed', output: 'done' });
    expect(done.actions.map((s) => [s.name, s.status])).toEqual([
      ['r38s-a', 'Completed'],
      ['r38s-b', 'Completed'],
      ['go', 'Completed'],
      ['r38s-c', 'Completed'],
    ]);
  });

  it('held: code that now ends before a recorded step blocks the run instead of completing it', async () => {
    const o = await blockedAfterDeploy(linear, 'truncated', atSignal);
    expectBlocked(o, /^replay_blocked: the code finished after step 2, but step 3 \(signal "go"\) is recorded/);
  });

  it('held: a parallel block reordered, or widened in the middle, blocks the run at the item that differs', async () => {
    const swapped = await blockedAfterDeploy(fanned, 'swapped', atSignal);
    expectBlocked(
      swapped,
      /^replay_blocked: step 1 is recorded as action "r38s-p" but the code now asks for action "r38s-q"/,
    );
    const widened = await blockedAfterDeploy(fanned, 'widened', atSignal);
    expectBlocked(
      widened,
      /^replay_blocked: step 2 is recorded as action "r38s-q" but the code now asks for action "r38s-r"/,
    );
  });

  it('held: a compensation removed while the rollback is under way blocks the run; nothing more is compensated and it does not fail', async () => {
    code.undoFails = true;
    const o = await blockedAfterDeploy(
      saga,
      'no-undo-b',
      (d) => d.run.waitingFor !== null && d.compensations.some((k) => k.status === 'Failed'),
    );
    expect(o.after.run.stuckReason).toMatch(
      /^replay_blocked: rollback level 1 is recorded as \[r38s-undo-b, r38s-undo-a\] but the code now registers \[r38s-undo-a\]/,
    );
    expect(terminal).not.toContain(o.after.run.status);
    expect(o.ranSince).toEqual([]);
    expect(o.after.compensations.map((k) => [k.name, k.status])).toEqual(
      o.before.compensations.map((k) => [k.name, k.status]),
    );
  });

  it("held (by ADR 0003, the contract is kind and name): a step waiting for its retry runs again with its recorded input, not the new code's", async () => {
    code.undoFails = true;
    code.variant = 'orig';
    t.engine.startWorkers();
    const { runId } = await t.engine.startFlow(retried, null);
    await t.drive(runId, {
      skipTime: false,
      until: (d) => d.run.status === 'Waiting' && d.actions[0]?.status === 'Failed',
    });
    const mark = ran.length;
    code.variant = 'new-input';
    code.undoFails = false;
    const done = await t.drive(runId, { skipTime: true });
    await t.engine.stopWorkers();
    expect(done.run).toMatchObject({ status: 'Completed', output: { n: 1 } });
    expect(ran.slice(mark).filter((n) => n.startsWith('r38s-flaky'))).toEqual(['r38s-flaky:1']);
  });

  it('held: a blocked run is terminated by a repair drafted against its state, a stale one is refused, and nothing is compensated', async () => {
    const o = await blockedAfterDeploy(linear, 'reordered', atSignal);
    const who = { actor: 'ops@example.test', reason: 'review 38: the deploy cannot be undone' };
    const cmd = (runStatus: string) =>
      ({
        kind: 'run.terminate',
        target: { runId: o.after.run.id },
        expected: { runStatus },
        ...who,
        idempotencyKey: randomUUID(),
      }) as RepairCommand;
    const stale = await t.engine.repairs.apply(cmd('Running')).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(EngineError);
    expect(stale).toMatchObject({ code: 'repair_conflict' });
    expect((await t.engine.getRun(o.after.run.id))?.run.status).toBe('Waiting');
    await t.engine.repairs.apply(cmd('Waiting'));
    const after = await t.engine.getRun(o.after.run.id);
    expect(after?.run.status).toBe('Terminated');
    expect(after?.compensations).toEqual([]);
    expect(after?.run.leftUndone).toMatchObject({
      steps: [
        { sequence: 1, name: 'r38s-a' },
        { sequence: 2, name: 'r38s-b' },
      ],
    });
    expect(after?.events.filter((e) => e.type === 'run.unstuck')).toHaveLength(1);
  });

  it('held: the original code deployed again and a kick resume a blocked run, which then finishes once', async () => {
    const o = await blockedAfterDeploy(linear, 'inserted', atSignal);
    code.variant = 'orig';
    t.engine.startWorkers();
    await t.engine.kick(o.after.run.id);
    await t.drive(o.after.run.id, { skipTime: false, until: (d) => d.run.stuckReason === null && atSignal(d) });
    await t.engine.signal(o.after.run.id, 'go');
    const done = await t.drive(o.after.run.id, { skipTime: false });
    await t.engine.stopWorkers();
    expect(done.run).toMatchObject({ status: 'Completed', output: 'done', stuckReason: null });
    expect(done.actions.map((s) => s.name)).toEqual(['r38s-a', 'r38s-b', 'go', 'r38s-c']);
  });

  it('held: two versions of one flow cannot be registered side by side in one engine (ADR 0003 rejected versioned registries)', () => {
    const v2 = defineFlow({ name: 'r38s-linear', version: 2, run: async () => null });
    let thrown: unknown;
    try {
      createEngine({ db: t.db, flows: [linear, v2], actions: [], logger: pino({ level: 'silent' }) });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ code: 'config_invalid' });
  });
});
