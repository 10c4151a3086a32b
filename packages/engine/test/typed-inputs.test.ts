import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { defineAction, type Json } from '../src/definitions/define-action.ts';
import { defineFlow } from '../src/definitions/define-flow.ts';
import type { StandardSchemaV1 } from '../src/definitions/standard-schema.ts';
import { EngineError } from '../src/errors/engine-error.ts';
import type { RepairCommand } from '../src/repairs/repair-command.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

const charge = defineAction({
  name: 'typed.charge',
  input: z.object({ orderId: z.string(), amount: z.number() }),
  output: z.object({ chargeId: z.string() }),
  run: async (i) => ({ chargeId: `ch_${i.orderId}` }),
});

/** Returns what its output schema refuses: the step must fail at once, not retry. */
const liar = defineAction({
  name: 'typed.liar',
  retry: { maxAttempts: 3 },
  output: z.object({ chargeId: z.string() }),
  run: async (_i: { orderId: string }) => ({ chargeId: 42 }) as unknown as { chargeId: string },
});

const order = defineFlow({
  name: 'typed.order',
  version: 1,
  input: z.object({ orderId: z.string(), amount: z.number(), currency: z.string().default('EUR') }),
  signals: { approve: z.object({ by: z.string() }) },
  run: async (ctx, input) => {
    // The types come from the schemas: input.amount is a number, the result a chargeId string.
    const { chargeId } = await ctx.action(charge, { orderId: input.orderId, amount: input.amount });
    const approval = await ctx.awaitSignal<{ by: string }>('approve', { timeoutSeconds: 3600 });
    return { chargeId, currency: input.currency, by: approval?.by ?? null };
  },
});

const lying = defineFlow({
  name: 'typed.lying',
  version: 1,
  run: async (ctx, input: { orderId: string }) => ctx.action(liar, input),
});

/** A Standard Schema written by hand, no library: the engine depends on the interface alone. */
const positive: StandardSchemaV1<unknown, { n: number }> = {
  '~standard': {
    version: 1,
    vendor: 'hand-written',
    validate: (v) =>
      typeof v === 'object' && v !== null && typeof (v as { n?: unknown }).n === 'number' && (v as { n: number }).n > 0
        ? { value: v as { n: number } }
        : { issues: [{ message: 'must be a positive number', path: [{ key: 'n' }] }] },
  },
};
const counted = defineFlow({ name: 'typed.counted', version: 1, input: positive, run: async (_ctx, i) => i.n });

/** Starts `counted` as a child with the n it is given; says what ctx.child refused, if it did. */
const parent = defineFlow({
  name: 'typed.parent',
  version: 1,
  run: async (ctx, i: { n: number }): Promise<Json> => {
    try {
      return { child: await ctx.child(counted, { n: i.n }) };
    } catch (err) {
      const e = err as EngineError;
      return { refused: { code: e.code, field: e.field, message: e.message } };
    }
  },
});

async function refusal(p: Promise<unknown>): Promise<EngineError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}

describe(`typed, validated inputs and outputs (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  /**
   * Rows of runs, events, jobs and signals: all of them, or (with `runId`) those of that run and its
   * children, which other runs' late acknowledgements cannot move.
   */
  const counts = async (runId?: string) => {
    const p = t.db.prisma;
    const ofRun = runId === undefined ? {} : { run_id: runId };
    return [
      await p.flowRun.count({ where: runId === undefined ? {} : { OR: [{ id: runId }, { parent_run_id: runId }] } }),
      await p.flowEvent.count({ where: ofRun }),
      await p.job.count({ where: ofRun }),
      await p.signal.count({ where: ofRun }),
    ];
  };
  beforeAll(async () => {
    t = await openTestEngine({ flows: [order, lying, counted, parent], actions: [charge, liar] });
  });
  afterAll(async () => t?.closeAll());

  it('a start whose input the flow refuses is invalid_input naming the path, and writes nothing', async () => {
    const before = await counts();
    const err = await refusal(t.engine.startFlow('typed.order', 'just a string'));
    expect(err.code).toBe('invalid_input');
    expect(err.field).toBe('input');
    const nested = await refusal(t.engine.startFlow('typed.order', { orderId: 'o-1', amount: 'lots' }));
    expect(nested.field).toBe('input.amount');
    expect(nested.message).toMatch(/^input\.amount: .*expected number/);
    expect(await counts()).toEqual(before);
  });

  it('any Standard Schema validator is checked, its path named', async () => {
    const err = await refusal(t.engine.startFlow(counted, { n: -1 }));
    expect(err.message).toBe('input.n: must be a positive number');
    expect((await t.runToCompletion(counted, { n: 3 })).run.status).toBe('Completed');
  });

  it("a child's input is checked against the child's schema before the child is started: refused naming the path, no child run", async () => {
    const refused = await t.runToCompletion(parent, { n: 0 });
    expect(refused.run.status).toBe('Completed');
    expect(refused.run.output).toEqual({
      refused: {
        code: 'invalid_input',
        field: 'input.n',
        message: 'child flow typed.counted (step 1) was not started: input.n: must be a positive number',
      },
    });
    expect(refused.actions).toEqual([]);
    expect(await t.db.prisma.flowRun.count({ where: { parent_run_id: refused.run.id } })).toBe(0);
    const started = await t.runToCompletion(parent, { n: 2 });
    expect(started.run.output).toEqual({ child: 2 });
    expect(started.actions).toMatchObject([{ kind: 'child', name: 'typed.counted', status: 'Completed' }]);
  });

  it('the input stored and replayed is what the schema produced (defaults filled)', async () => {
    const { runId } = await t.engine.startFlow(order, { orderId: 'o-2', amount: 5, currency: 'EUR' });
    const row = await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(row.input).toEqual({ orderId: 'o-2', amount: 5, currency: 'EUR' });
    // Through the flow object too: a start passes the schema's input type, where the default may be left out.
    const bare = await t.engine.startFlow(order, { orderId: 'o-3', amount: 5 });
    const stored = await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: bare.runId } });
    expect(stored.input).toEqual({ orderId: 'o-3', amount: 5, currency: 'EUR' });
  });

  it("a start, a test-kit run and a child pass the schema's input type; the flow's code gets its output type (tsc)", () => {
    // Type-level (checked by the repository's one tsc program, ADR 0092): nothing here runs.
    const typedCalls = (kit: typeof t, ctx: Parameters<typeof order.run>[0]) => [
      kit.engine.startFlow(order, { orderId: 'o', amount: 1 }),
      kit.engine.startFlow(order, { orderId: 'o', amount: 1, currency: 'USD' }),
      kit.runToCompletion(order, { orderId: 'o', amount: 1 }),
      ctx.child(order, { orderId: 'o', amount: 1 }),
      // @ts-expect-error a field without a default is still required
      kit.engine.startFlow(order, { orderId: 'o' }),
      // @ts-expect-error and still of its type
      kit.runToCompletion(order, { orderId: 'o', amount: 'lots' }),
      // @ts-expect-error a child's input too
      ctx.child(order, { amount: 1 }),
      // @ts-expect-error a flow without a schema takes what its code takes, as before
      kit.engine.startFlow(lying, {}),
      // By name the flow's types are unknown: any JSON, checked at run time.
      kit.engine.startFlow('typed.order', { orderId: 'o' }),
    ];
    expectTypeOf(typedCalls).toBeFunction();
    expectTypeOf<Parameters<typeof order.run>[1]>().toEqualTypeOf<{
      orderId: string;
      amount: number;
      currency: string;
    }>();
    type StartInput = Parameters<typeof t.engine.startFlow<{ a: string }, { a?: string }>>[1];
    expectTypeOf<StartInput>().toEqualTypeOf<{ a?: string }>();
  });

  it('a signal the flow does not declare, or whose payload its schema refuses, is refused before any write', async () => {
    const { runId } = await t.engine.startFlow(order, { orderId: 'o-4', amount: 1, currency: 'USD' });
    await t.drive(runId, { until: (d) => d.run.waitingFor?.includes('approve') ?? false });
    // The park commits before the pool acknowledges its job: count once the acknowledgement is in.
    await waitFor("the parked run's job acknowledged", async () =>
      (await t.db.prisma.job.count({ where: { run_id: runId, locked_by: { not: null } } })) === 0 ? true : undefined,
    );
    const before = await counts(runId);
    const unknown = await refusal(t.engine.signal(runId, 'aprove', { by: 'ann' }));
    expect(unknown.field).toBe('name');
    const bad = await refusal(t.engine.signal(runId, 'approve', { by: 7 }));
    expect(bad.field).toBe('payload.by');
    expect(await counts(runId)).toEqual(before);
    await t.engine.signal(runId, 'approve', { by: 'ann' });
    const done = await t.drive(runId);
    expect(done.run.status).toBe('Completed');
    expect(done.run.output).toEqual({ chargeId: 'ch_o-4', currency: 'USD', by: 'ann' });
  });

  it('an action whose output its schema refuses fails the step at once, naming the path (not retried)', async () => {
    const done = await t.runToCompletion(lying, { orderId: 'o-5' });
    expect(done.run.status).toBe('Failed');
    const step = await t.db.prisma.actionRun.findFirstOrThrow({ where: { run_id: done.run.id } });
    expect(step.status).toBe('Errored');
    expect(step.attempts).toBe(1);
    expect((step.error as { message: string }).message).toMatch(/^output\.chargeId: /);
  });

  it("a repair's output or signal payload that the schema refuses is invalid_input, with no change and no audit row", async () => {
    t.faults.crashAfterClaim('typed.charge');
    const { runId } = await t.engine.startFlow(order, { orderId: 'o-6', amount: 2, currency: 'EUR' });
    const d = await t.drive(runId, { skipTime: false, until: (x) => x.actions[0]?.status === 'Running' });
    await t.engine.stopWorkers();
    const draft = {
      actor: 'ops',
      reason: 'typed repair',
      target: { runId, stepSequence: 1 },
      expected: { runStatus: d.run.status as 'Waiting', stepStatus: 'Running', stepAttempts: 1 },
    } as const;
    const before = [...(await counts()), await t.db.prisma.repairCommand.count()];
    const complete: RepairCommand = {
      ...draft,
      kind: 'run.complete_step' as const,
      idempotencyKey: 'typed-1',
      output: { chargeId: 42 },
    };
    const preview = await refusal(t.engine.repairs.preview(complete));
    expect(preview).toMatchObject({ code: 'invalid_input', field: 'output.chargeId' });
    const applied = await refusal(t.engine.repairs.apply(complete));
    expect(applied).toMatchObject({ code: 'invalid_input', field: 'output.chargeId' });
    const signal: RepairCommand = {
      ...draft,
      target: { runId },
      expected: { runStatus: d.run.status as 'Waiting' },
      kind: 'run.signal',
      idempotencyKey: 'typed-2',
      signal: { name: 'approve', payload: { by: null } },
    };
    expect(await refusal(t.engine.repairs.apply(signal))).toMatchObject({ field: 'signal.payload.by' });
    expect([...(await counts()), await t.db.prisma.repairCommand.count()]).toEqual(before);
    const ok = await t.engine.repairs.apply({
      ...complete,
      idempotencyKey: 'typed-3',
      output: { chargeId: 'ch_hand' },
    });
    expect(ok.status).toBe('applied');
  });
});
