import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction } from '../../../src/definitions/define-action.ts';
import { defineFlow } from '../../../src/definitions/define-flow.ts';
import type { Json } from '../../../src/definitions/define-action.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';

/**
 * Review 49 (3). ARCHITECTURE invariant 6: values JSON cannot represent are refused, never converted.
 * An action's output is checked (ADR 0013). What of the flow's own return value, written as the run's
 * output? A flow returning a BigInt, a cycle, NaN, a Date, or an output larger than any limit: the run
 * must end with a failure naming the problem, not stay open forever or store a converted value.
 */
const limit = 4096;
const make: Record<string, () => unknown> = {
  bigint: () => ({ total: 10n }),
  circular: () => {
    const o: Record<string, unknown> = { label: 'circular' };
    o.self = o;
    return o;
  },
  nan: () => ({ ratio: Number.NaN }),
  date: () => ({ at: new Date(0) }),
  undefinedField: () => ({ gone: undefined, kept: 1 }),
  atLimit: () => ({ blob: 'x'.repeat(limit - '{"blob":""}'.length) }),
  pastLimit: () => ({ blob: 'x'.repeat(limit - '{"blob":""}'.length + 1) }),
};

const produce = defineAction({
  name: 'r49.produce',
  run: (i: { kind: string }) => Promise.resolve(make[i.kind]!() as Json),
});
const actionFlow = defineFlow({
  name: 'r49.action-output',
  version: 1,
  run: async (ctx, i: { kind: string }) => {
    await ctx.action(produce, i).run();
    return { ok: true };
  },
});
const returnsFlow = defineFlow({
  name: 'r49.flow-output',
  version: 1,
  run: async (ctx, i: { kind: string }) => {
    await ctx.action(produce, { kind: 'atLimit' }).run();
    return make[i.kind]!() as Json;
  },
});

const echo = defineAction({
  name: 'r49.echo',
  run: (i: Json) => Promise.resolve({ seen: JSON.stringify(i) ?? 'undefined' }),
});
const undo = defineAction({ name: 'r49.undo', run: () => Promise.resolve({ undone: true }) });
const fail = defineAction({ name: 'r49.fail', run: () => Promise.reject(new Error('forward step failed')) });
const inputFlow = defineFlow({
  name: 'r49.action-input',
  version: 1,
  run: async (ctx, i: { kind: string }) => ctx.action(echo, make[i.kind]!() as Json).run(),
});
const compensationInputFlow = defineFlow({
  name: 'r49.compensation-input',
  version: 1,
  run: async (ctx, i: { kind: string }) => {
    try {
      await ctx
        .action(echo, { ok: 1 })
        .compensateWith(undo, () => make[i.kind]!() as Json)
        .run();
      await ctx.action(fail, {}).run();
      return { ok: true };
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe(`values JSON cannot hold, at the action and at the flow's end (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [actionFlow, returnsFlow, inputFlow, compensationInputFlow],
      actions: [produce, echo, undo, fail],
      config: { limits: { action_output_bytes: limit } },
    });
  });
  afterAll(async () => {
    await t?.closeAll();
  });

  it('an action output at the limit is recorded; one byte past it fails the step naming the setting', async () => {
    const at = await t.runToCompletion(actionFlow, { kind: 'atLimit' });
    expect(at.run.status).toBe('Completed');
    const past = await t.runToCompletion(actionFlow, { kind: 'pastLimit' });
    expect(past.run.status).toBe('Failed');
    expect(JSON.stringify(past.run.error)).toContain('limits.action_output_bytes');
  });

  it.each(['bigint', 'circular', 'nan', 'date'])(
    'an action returning a %s fails its step with a message naming the value, and the run ends',
    async (kind) => {
      const done = await t.runToCompletion(actionFlow, { kind }, { timeoutMs: 15_000 });
      expect(done.run.status).toBe('Failed');
      expect(JSON.stringify(done.run.error)).toMatch(/output/);
    },
  );

  it.each(['bigint', 'circular'])(
    'a flow returning a %s as its own output ends Failed naming the output, never stays Running with no reason',
    async (kind) => {
      const { runId } = await t.engine.startFlow(returnsFlow, { kind });
      const drove = await t.drive(runId, { timeoutMs: 8_000 }).then(
        () => 'terminal',
        (err: unknown) => (err as Error).message,
      );
      const detail = await t.engine.getRun(runId);
      const jobs = await t.db.prisma.job.findMany({ where: { run_id: runId } });
      const deliveries = jobs.reduce((n, j) => n + j.deliveries, 0);
      expect(
        { status: detail?.run.status, stuckReason: detail?.run.stuckReason ?? null },
        `${drove}; its wake was delivered ${deliveries} times`,
      ).toMatchObject({ status: 'Failed' });
      expect(JSON.stringify(detail?.run.error)).toMatch(/output/);
    },
  );

  it.each([
    ['nan', { ratio: null }],
    ['date', { at: '1970-01-01T00:00:00.000Z' }],
  ])('a flow returning a %s as its own output is refused, not stored converted', async (kind, converted) => {
    const { runId } = await t.engine.startFlow(returnsFlow, { kind });
    const detail = await t.drive(runId, { timeoutMs: 8_000 });
    // What it does today: Completed, with the value JSON.stringify made of it.
    expect(
      { status: detail.run.status, output: detail.run.output },
      `converted would be ${JSON.stringify(converted)}`,
    ).toMatchObject({ status: 'Failed' });
    expect(JSON.stringify(detail.run.error)).toMatch(/output/);
  });

  it.each([
    ['bigint', 'stays open'],
    ['circular', 'stays open'],
    ['nan', 'stored as null'],
    ['date', 'stored as a string'],
  ])("an action's input holding a %s is refused naming the input, not written (today it %s)", async (kind) => {
    const before = await t.db.prisma.flowRun.count({ where: { flow_name: 'r49.action-input' } });
    const started = await t.engine.startFlow(inputFlow, { kind }).then(
      (r) => r,
      (err: unknown) => ({ threw: `${(err as Error).name}: ${(err as Error).message}` }),
    );
    // The start may run the flow's code to its first step (ADR 0048, 0097): then the start itself throws.
    const written = (await t.db.prisma.flowRun.count({ where: { flow_name: 'r49.action-input' } })) - before;
    expect(started, `startFlow answered so; runs written: ${written}`).not.toHaveProperty('threw');
    const { runId } = started as { runId: string };
    const drove = await t.drive(runId, { timeoutMs: 8_000 }).then(
      () => 'terminal',
      (err: unknown) => (err as Error).message,
    );
    const detail = await t.engine.getRun(runId);
    const step = await t.db.prisma.actionRun.findFirst({ where: { run_id: runId, sequence: 1 } });
    const seen = {
      status: detail?.run.status,
      step: step && { status: step.status, input: step.input, output: step.output },
    };
    expect(seen, `${drove}; ${JSON.stringify(seen)}`).toMatchObject({ status: 'Failed' });
    expect(JSON.stringify(detail?.run.error)).toMatch(/input/);
  });

  it.each(['bigint', 'nan'])(
    "a compensation's input holding a %s fails the rollback naming the input; the run ends",
    async (kind) => {
      const { runId } = await t.engine.startFlow(compensationInputFlow, { kind });
      const drove = await t.drive(runId, { timeoutMs: 8_000 }).then(
        () => 'terminal',
        (err: unknown) => (err as Error).message,
      );
      const detail = await t.engine.getRun(runId);
      const comps = await t.db.prisma.compensationRun.findMany({ where: { run_id: runId } });
      const seen = {
        status: detail?.run.status,
        compensations: comps.map((c) => ({ status: c.status, input: c.input })),
      };
      expect(['Failed', 'Compensated'], `${drove}; ${JSON.stringify(seen)}`).toContain(detail?.run.status);
      expect(
        comps.filter((c) => c.status === 'Completed'),
        JSON.stringify(seen),
      ).toEqual([]);
      expect(JSON.stringify(detail?.run.error), JSON.stringify(seen)).toMatch(/input/);
    },
  );
});
