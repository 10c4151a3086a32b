import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../../src/create-engine.ts';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, type ActionDefinition } from '../../../src/definitions/define-action.ts';
import { defineFlow } from '../../../src/definitions/define-flow.ts';
import { EngineError } from '../../../src/errors/engine-error.ts';
import { parseEngineConfig } from '../../../src/runtime/engine-config.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

const logger = pino({ level: 'silent' });
const fast = { worker: { poll_interval_ms: 20 } };

/** What an action throws next, by the input's `kind`. */
const thrown: Record<string, () => unknown> = {
  string: () => 'plain string thrown',
  undefined: () => undefined,
  circular: () => {
    const o: Record<string, unknown> = { label: 'circular' };
    o.self = o;
    return o;
  },
  huge: () => ({ blob: 'x'.repeat(3 * 1_048_576) }),
  hugeMessage: () => new Error('m'.repeat(3 * 1_048_576)),
  nullPrototype: () => Object.assign(Object.create(null) as object, { code: 'E_NULL_PROTO' }),
  throwingToString: () => ({
    toString() {
      throw new Error('toString is not for you');
    },
  }),
};
const thrower = defineAction({
  name: 'r35.throws',
  // Throwing what is not an Error is the point of this action.
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
  run: (i: { kind: string }) => Promise.reject((thrown[i.kind] ?? (() => 'unknown'))()),
});
const throwsFlow = defineFlow({
  name: 'r35.throws-flow',
  version: 1,
  run: async (ctx, i: { kind: string }) => ctx.action(thrower, i),
});

let gateRelease: () => void = () => undefined;
let gate = Promise.resolve();
let entered = 0;
const gated = defineAction({
  name: 'r35.gated',
  run: async () => {
    entered += 1;
    await gate;
    return { done: true };
  },
});
const gatedFlow = defineFlow({
  name: 'r35.gated-flow',
  version: 1,
  run: async (ctx) => ctx.action(gated, {}),
});
// defineAction now refuses this policy (case 2 below): the definition is built as a plain object, as
// one made without defineAction would be, to prove decideRetry itself never makes an Invalid Date.
const nanBackoff: ActionDefinition = {
  ...defineAction({
    name: 'r35.nan-backoff',
    retry: { maxAttempts: 3 },
    run: () => Promise.reject(new Error('always fails')),
  }),
  retry: { maxAttempts: 3, backoff: { initialMs: Number.NaN } },
};
const nanFlow = defineFlow({ name: 'r35.nan-flow', version: 1, run: async (ctx) => ctx.action(nanBackoff, {}) });

const retried = defineAction({
  name: 'r35.retried',
  // No jitter: the delay is exactly the configured retry.base_delay_ms (decide-retry.ts).
  retry: { maxAttempts: 3, backoff: { jitter: false } },
  run: () => Promise.reject(new Error('fails, to be retried')),
});
const retriedFlow = defineFlow({ name: 'r35.retried-flow', version: 1, run: async (ctx) => ctx.action(retried, {}) });

const flows = [throwsFlow, gatedFlow, nanFlow, retriedFlow];
const actions = [thrower, gated, nanBackoff, retried];

describe(`review 35: the engine's public API as an embedding application uses it (${testDbKind()})`, () => {
  let db: Database;
  let engine: Engine;
  beforeAll(async () => {
    db = await openTestDatabase();
    engine = createEngine({ db, flows, actions, logger, config: fast });
    engine.startWorkers();
  });
  afterAll(async () => {
    await engine?.stopWorkers(5000);
    await db?.close();
  });

  /** Waits for the run to finish; a timeout says where the run and its steps were left. */
  const settled = (runId: string) => {
    let seen = 'nothing read yet';
    return waitFor(
      () => `run ${runId} to finish; last seen: ${seen}`,
      async () => {
        const d = await engine.getRun(runId);
        seen = JSON.stringify({
          run: d?.run.status,
          stuck: d?.run.stuckReason,
          steps: d?.actions.map((a) => [a.name, a.status, a.attempts]),
        });
        return d && ['Completed', 'Failed', 'Compensated', 'Cancelled', 'TimedOut'].includes(d.run.status)
          ? d
          : undefined;
      },
    );
  };

  // A thrown value is recorded storably, and the run's history shows it.
  it.each([
    ['string', /plain string thrown/],
    ['undefined', /undefined/],
    ['circular', /object/i],
    ['huge', /object/i],
    ['hugeMessage', /^m+/],
  ])('an action that throws a %s ends its run Failed with the thrown value in the step record', async (kind, re) => {
    const { runId } = await engine.startFlow(throwsFlow, { kind });
    const d = await settled(runId);
    expect(d.run.status).toBe('Failed');
    const step = d.actions.find((a) => a.name === 'r35.throws');
    expect(step?.status).toBe('Errored');
    expect(String((step?.error as { message?: string } | null)?.message)).toMatch(re);
  });

  it.each(['nullPrototype', 'throwingToString'])(
    'an action that throws a %s object (String() of it throws) still ends its step Errored and its run Failed',
    async (kind) => {
      const { runId } = await engine.startFlow(throwsFlow, { kind });
      // Progress: the action has run at least once (its row was claimed).
      await waitFor('the step to be claimed', async () => {
        const d = await engine.getRun(runId);
        return d?.actions.some((a) => a.name === 'r35.throws' && a.attempts >= 1) ? true : undefined;
      });
      const d = await settled(runId);
      expect(d.run.status).toBe('Failed');
      const step = d.actions.find((a) => a.name === 'r35.throws');
      expect(step?.status).toBe('Errored');
      expect(step?.error).toMatchObject({ name: 'NonError' });
    },
  );

  it('defineAction refuses a NaN backoff with a typed error naming the field', () => {
    let err: unknown;
    try {
      defineAction({
        name: 'r35.bad',
        retry: { maxAttempts: 2, backoff: { initialMs: Number.NaN } },
        run: () => Promise.resolve(null),
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(EngineError);
    expect((err as EngineError).code).toBe('invalid_input');
    expect((err as EngineError).field).toBe('retry.backoff.initialMs');
    expect(String((err as Error).message)).toMatch(/initialMs/);
  });

  it('a step whose retry delay computes to NaN still records its failure (not left Running)', async () => {
    const { runId } = await engine.startFlow(nanFlow, {});
    await waitFor('the step to be claimed', async () => {
      const d = await engine.getRun(runId);
      return d?.actions.some((a) => a.name === 'r35.nan-backoff' && a.attempts >= 1) ? true : undefined;
    });
    let seen = '';
    const step = await waitFor(
      () => `the failed try to be recorded; last seen: ${seen}`,
      async () => {
        const d = await engine.getRun(runId);
        const s = d?.actions.find((a) => a.name === 'r35.nan-backoff');
        seen = JSON.stringify({ run: d?.run.status, step: s && [s.status, s.attempts] });
        return s && s.status !== 'Running' ? s : undefined;
      },
      15_000,
    );
    expect(['Failed', 'Errored']).toContain(step.status);
  });

  it('engine config: a retry delay bigger than a date can hold is refused, naming retry.base_delay_ms', () => {
    // engine-config.ts bounds the outbox's delays "so a retry's time is always a date"; a step's too.
    expect(() => parseEngineConfig({ retry: { base_delay_ms: 9e15, max_delay_ms: 9e15 } })).toThrow(
      /retry\.base_delay_ms|retry\.max_delay_ms/,
    );
  });

  it('retry.base_delay_ms = 9e15 is refused by createEngine; at the largest accepted delay a failed try is still recorded (not left Running)', async () => {
    // Fixed (ADR 0108): the config no longer takes a delay past a date; the test first ran with 9e15 accepted.
    expect(() =>
      createEngine({
        db,
        flows,
        actions,
        logger,
        config: { ...fast, retry: { base_delay_ms: 9e15, max_delay_ms: 9e15 } },
      }),
    ).toThrow(EngineError);
    const tenYearsMs = 10 * 365 * 86_400_000;
    const huge = createEngine({
      db,
      flows,
      actions,
      logger,
      config: { ...fast, retry: { base_delay_ms: tenYearsMs, max_delay_ms: tenYearsMs } },
    });
    await engine.stopWorkers(5000);
    huge.startWorkers();
    try {
      const { runId } = await huge.startFlow(retriedFlow, {});
      let seen = '';
      const step = await waitFor(
        () => `the failed try to be recorded; last seen: ${seen}`,
        async () => {
          const d = await huge.getRun(runId);
          const s = d?.actions.find((a) => a.name === 'r35.retried');
          seen = JSON.stringify({ run: d?.run.status, step: s && [s.status, s.attempts] });
          return s && s.attempts >= 1 && s.status !== 'Running' ? s : undefined;
        },
        15_000,
      );
      // Failed, with its retry ten years ahead: a date the row holds.
      expect(step.status).toBe('Failed');
    } finally {
      await huge.stopWorkers(200);
      engine.startWorkers();
    }
  });

  it.each([
    [{ worker: { concurrency: -1 } }, /worker\.concurrency/],
    [{ worker: { poll_interval_ms: Number.NaN } }, /worker\.poll_interval_ms/],
    [{ worker: { concurency: 4 } }, /concurency/],
    [{ sweeps: { transaction_timeout_ms: Number.NaN } }, /sweeps\.transaction_timeout_ms/],
  ])('createEngine refuses config %j with config_invalid naming the field', (config, re) => {
    let err: unknown;
    try {
      createEngine({ db, flows, actions, logger, config: config as never });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(EngineError);
    expect((err as EngineError).code).toBe('config_invalid');
    expect((err as Error).message).toMatch(re);
  });

  it('two flows registered under one name, or two actions, are refused with config_invalid', () => {
    const twin = defineFlow({ name: 'r35.throws-flow', version: 2, run: () => Promise.resolve(null) });
    expect(() => createEngine({ db, flows: [...flows, twin], actions, logger })).toThrow(EngineError);
    expect(() => createEngine({ db, flows, actions: [...actions, thrower], logger })).toThrow(/r35\.throws/);
  });

  it('a run started before startWorkers and after stopWorkers is kept and finished by the next pool; start/stop twice', async () => {
    const second = createEngine({ db, flows, actions, logger, config: fast });
    // The shared engine's pool must not take these: stop it for the while.
    await engine.stopWorkers(5000);
    try {
      const before = await second.startFlow(throwsFlow, { kind: 'string' });
      second.startWorkers();
      second.startWorkers();
      expect((await settled(before.runId)).run.status).toBe('Failed');
      expect(await second.stopWorkers(5000)).toEqual({ drained: true });
      expect(await second.stopWorkers(5000)).toEqual({ drained: true });
      const after = await second.startFlow(throwsFlow, { kind: 'string' });
      expect((await second.getRun(after.runId))?.run.status).not.toBe('Failed');
      second.startWorkers();
      expect((await settled(after.runId)).run.status).toBe('Failed');
      await second.stopWorkers(5000);
    } finally {
      engine.startWorkers();
    }
  });

  it('stopWorkers with a step still running says drained: false, and the step’s late outcome is kept: the run completes', async () => {
    gate = new Promise<void>((r) => (gateRelease = r));
    entered = 0;
    const { runId } = await engine.startFlow(gatedFlow, {});
    await waitFor('the gated action to start', () => Promise.resolve(entered > 0 ? true : undefined));
    expect(await engine.stopWorkers(50)).toEqual({ drained: false });
    gateRelease();
    const step = await waitFor('the late outcome to be written', async () => {
      const d = await engine.getRun(runId);
      const s = d?.actions.find((a) => a.name === 'r35.gated');
      return s && s.status !== 'Running' ? s : undefined;
    });
    expect(step.status).toBe('Completed');
    engine.startWorkers();
    expect((await settled(runId)).run.status).toBe('Completed');
  });

  it('two engines in one process on one database each run their own starts, and every run finishes once', async () => {
    const other = createEngine({ db, flows, actions, logger, config: fast });
    other.startWorkers();
    try {
      const ids = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 ? engine : other).startFlow(throwsFlow, { kind: 'string' })),
      );
      for (const { runId } of ids) {
        const d = await settled(runId);
        expect(d.run.status).toBe('Failed');
        expect(d.actions.filter((a) => a.name === 'r35.throws')).toHaveLength(1);
        expect(d.actions[0]?.attempts).toBe(1);
      }
    } finally {
      await other.stopWorkers(5000);
    }
  });
});
