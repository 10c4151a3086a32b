import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction } from '../../../src/definitions/define-action.ts';
import { defineFlow } from '../../../src/definitions/define-flow.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { orderFulfilment } from '../../process/support/order-fulfilment.ts';
import { msg, newOrderId } from '../../process/support/process-harness.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { badJsonValues, badTextValues } from './support/bad-values.ts';
import { databaseFingerprint } from './support/database-fingerprint.ts';

/**
 * Issue 13, items 6, 8 and 9: bad input reached the database raw (a Prisma error, a RangeError) or
 * was silently changed (BigInt stored as a string, NaN as null, two ids with different lone
 * surrogates stored as one). Every entry point must refuse it as `invalid_input`, naming the field
 * and the path inside it, and write nothing: the whole database is fingerprinted around each call.
 */
describe(`bad input is refused as invalid_input, naming the field, before any write (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  let openRun: string;
  let instanceId: string;
  const noop = defineAction({ name: 'wave2.noop', run: async () => ({ ok: true }) });
  const flow = defineFlow({
    name: 'wave2.bad-input',
    version: 1,
    run: async (ctx) => {
      await ctx.action(noop, {}).run();
      return null;
    },
  });

  beforeAll(async () => {
    db = await openTestDatabase();
    // No workers: nothing moves in the background, so any change to the fingerprint is the call's.
    t = await createTestEngine({
      db,
      flows: [flow],
      actions: [noop],
      processes: [orderFulfilment()],
      config: { processes: { quarantine_after_seconds: 60 } },
    });
    openRun = (await t.engine.startFlow(flow, { ok: 1 })).runId;
    const order = newOrderId();
    await t.engine.processes.deliver('order-fulfilment', msg.paymentCaptured(order));
    const [instance] = await t.engine.processes.findByStatus('ACTIVE', new Date('2100-01-01'), 10);
    instanceId = instance?.id ?? '';
  });
  afterAll(async () => {
    await t.close();
    await db.close();
  });

  /** Runs `call`, expects invalid_input whose message matches every pattern, and no row changed. */
  async function refused(call: () => Promise<unknown>, ...says: (RegExp | string)[]) {
    const before = await databaseFingerprint(db);
    const err = await call().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err, 'the call must be refused').not.toBeNull();
    const e = err as { code?: string; message?: string; name?: string };
    expect({ name: e.name, code: e.code }).toEqual({ name: 'EngineError', code: 'invalid_input' });
    for (const s of says) expect(e.message).toMatch(typeof s === 'string' ? s : s);
    expect(await databaseFingerprint(db)).toEqual(before);
    return e as { field?: string | null };
  }

  const jsonEntries: { entry: string; field: string; call: (e: TestEngine, bad: unknown) => Promise<unknown> }[] = [
    { entry: 'startFlow', field: 'input', call: (e, bad) => e.engine.startFlow('wave2.bad-input', bad as never) },
    { entry: 'signal', field: 'payload', call: (e, bad) => e.engine.signal(openRun, 'go', bad as never) },
    {
      entry: 'processes.deliver',
      field: 'message.payload',
      call: (e, bad) =>
        e.engine.processes.deliver('order-fulfilment', { id: 'm-1', type: 'CustomerNoteAdded', payload: bad }),
    },
    {
      entry: 'processes.runOperatorCommand',
      field: 'input',
      call: (e, bad) =>
        e.engine.processes.runOperatorCommand('order-fulfilment', instanceId, {
          command: 'AcceptLateBooking',
          input: bad,
          expectedState: 'ManualReview',
          operator: 'ops',
          reason: 'repair',
          idempotencyKey: 'k-1',
        }),
    },
  ];

  for (const { entry, field, call } of jsonEntries) {
    for (const bad of badJsonValues) {
      it(`${entry}: ${bad.label} in ${field}`, async () => {
        const path = `${field}${bad.at}`;
        const e = await refused(() => call(t, bad.value()), `${path}`, bad.says);
        // The error carries the field and path as data too (the API names it from there).
        expect(e.field?.startsWith(path)).toBe(true);
      });
    }
  }

  const textEntries: { entry: string; field: string; call: (e: TestEngine, bad: unknown) => Promise<unknown> }[] = [
    {
      entry: 'startFlow',
      field: 'businessKey',
      call: (e, bad) => e.engine.startFlow(flow, { ok: 1 }, { businessKey: bad as string }),
    },
    {
      entry: 'startFlow',
      field: 'tags[1]',
      call: (e, bad) => e.engine.startFlow(flow, { ok: 1 }, { tags: ['a', bad as string] }),
    },
    { entry: 'signal', field: 'name', call: (e, bad) => e.engine.signal(openRun, bad as string, true) },
    { entry: 'cancel', field: 'reason', call: (e, bad) => e.engine.cancel(openRun, { reason: bad as string }) },
    { entry: 'terminate', field: 'reason', call: (e, bad) => e.engine.terminate(openRun, { reason: bad as string }) },
    {
      entry: 'listRuns',
      field: 'flowName',
      call: (e, bad) => e.engine.listRuns({ flowName: bad as string, limit: 5 }),
    },
    {
      entry: 'processes.deliver',
      field: 'message.id',
      call: (e, bad) => e.engine.processes.deliver('order-fulfilment', { ...msg.note('o-1', 'hi'), id: bad as string }),
    },
    ...(['operator', 'reason', 'idempotencyKey'] as const).map((f) => ({
      entry: 'processes.runOperatorCommand',
      field: f,
      call: (e: TestEngine, bad: unknown) =>
        e.engine.processes.runOperatorCommand('order-fulfilment', instanceId, {
          command: 'AcceptLateBooking',
          input: { shipmentId: 's-1' },
          expectedState: 'ManualReview',
          operator: 'ops',
          reason: 'repair',
          idempotencyKey: 'k-2',
          [f]: bad,
        }),
    })),
    ...(['operator', 'reason'] as const).map((f) => ({
      entry: 'processes.release',
      field: f,
      call: (e: TestEngine, bad: unknown) =>
        e.engine.processes.release(instanceId, { mode: 'skip', operator: 'ops', reason: 'repair', [f]: bad }),
    })),
  ];

  for (const { entry, field, call } of textEntries) {
    for (const bad of badTextValues) {
      it(`${entry}: ${bad.label} in ${field}`, async () => {
        const e = await refused(() => call(t, bad.value), field, bad.says);
        expect(e.field).toBe(field);
      });
    }
  }

  for (const [entry, call] of [
    ['signal', (e: TestEngine, id: string) => e.engine.signal(id, 'go', true)],
    ['cancel', (e: TestEngine, id: string) => e.engine.cancel(id, { reason: 'r' })],
    ['terminate', (e: TestEngine, id: string) => e.engine.terminate(id, { reason: 'r' })],
    ['kick', (e: TestEngine, id: string) => e.engine.kick(id)],
  ] as const) {
    for (const id of ['not-a-uuid', 'a\u0000b', '', '00000000-0000-0000-0000-00000000000g']) {
      it(`${entry}: a run id that is not a uuid (${JSON.stringify(id)})`, async () => {
        await refused(() => call(t, id), 'runId: must be a uuid');
      });
    }
  }

  for (const [entry, call] of [
    [
      'processes.runOperatorCommand',
      (e: TestEngine, id: string) =>
        e.engine.processes.runOperatorCommand('order-fulfilment', id, {
          command: 'AcceptLateBooking',
          input: { shipmentId: 's-1' },
          expectedState: 'ManualReview',
          operator: 'ops',
          reason: 'repair',
          idempotencyKey: 'k-3',
        }),
    ],
    [
      'processes.release',
      (e: TestEngine, id: string) => e.engine.processes.release(id, { mode: 'retry', operator: 'ops', reason: 'r' }),
    ],
  ] as const) {
    it(`${entry}: an instance id that is not a uuid`, async () => {
      await refused(() => call(t, 'x\u0000y'), 'instanceId: must be a uuid');
    });
  }

  it('getRun of an id that is not a uuid returns null', async () => {
    for (const id of ['not-a-uuid', 'a\u0000b', '', 'sur-\ud800']) expect(await t.engine.getRun(id)).toBeNull();
  });

  for (const [label, call] of [
    [
      'startFlow expiresInSeconds: 1e13',
      (e: TestEngine) => e.engine.startFlow(flow, { ok: 1 }, { expiresInSeconds: 1e13 }),
    ],
    [
      'startFlow runTimeoutSeconds: Infinity',
      (e: TestEngine) => e.engine.startFlow(flow, { ok: 1 }, { runTimeoutSeconds: Infinity }),
    ],
    [
      'startFlow expiresInSeconds: NaN',
      (e: TestEngine) => e.engine.startFlow(flow, { ok: 1 }, { expiresInSeconds: Number.NaN }),
    ],
    ['cancel cleanupSeconds: 1e13', (e: TestEngine) => e.engine.cancel(openRun, { reason: 'r', cleanupSeconds: 1e13 })],
  ] as const) {
    it(`${label} is refused with the allowed range`, async () => {
      await refused(
        () => call(t),
        /(expiresInSeconds|runTimeoutSeconds|cleanupSeconds): must be a number of seconds greater than 0 and at most 315360000/,
      );
    });
  }

  it('two message ids that differ only in their lone surrogate are never one silent duplicate', async () => {
    const order = newOrderId();
    await t.engine.processes.deliver('order-fulfilment', msg.paymentCaptured(order));
    const outcomes: string[] = [];
    for (const id of ['sur-\ud800', 'sur-\udbff']) {
      outcomes.push(
        await t.engine.processes.deliver('order-fulfilment', msg.note(order, `note ${id.length}`, id)).then(
          (r) => r.outcome,
          (e: unknown) => (e as { code?: string }).code ?? 'threw',
        ),
      );
    }
    expect(outcomes).not.toContain('duplicate');
    expect(outcomes).toEqual(['invalid_input', 'invalid_input']);
  });
});

describe(`the size limits are engine config (${testDbKind()})`, () => {
  it('a payload within the default but over a configured limit is refused, naming the setting', async () => {
    const db = await openTestDatabase();
    const flow = defineFlow({ name: 'wave2.sized', version: 1, run: async () => null });
    const t = await createTestEngine({
      db,
      flows: [flow],
      actions: [],
      processes: [orderFulfilment()],
      config: { limits: { flow_input_bytes: 100, signal_payload_bytes: 50, message_payload_bytes: 80, json_depth: 3 } },
    });
    try {
      const before = await databaseFingerprint(db);
      await expect(t.engine.startFlow(flow, { text: 'x'.repeat(100) })).rejects.toThrow(
        /input: is larger than 100 bytes of JSON, the limit \(limits\.flow_input_bytes\)/,
      );
      await expect(t.engine.startFlow(flow, { a: { b: { c: {} } } })).rejects.toThrow(
        /input\.a\.b\.c: nested more than 3/,
      );
      const { runId } = await t.engine.startFlow(flow, { text: 'x'.repeat(80) });
      await expect(t.engine.signal(runId, 'go', 'y'.repeat(60))).rejects.toThrow(/limits\.signal_payload_bytes/);
      await expect(
        t.engine.processes.deliver('order-fulfilment', msg.note(newOrderId(), 'z'.repeat(80))),
      ).rejects.toThrow(/message\.payload: is larger than 80 bytes.*limits\.message_payload_bytes/);
      const after = await databaseFingerprint(db);
      expect(after['flow_runs']).not.toEqual(before['flow_runs']);
      expect(after['signals']).toEqual(before['signals']);
      expect(after['saga_instances']).toEqual(before['saga_instances']);
    } finally {
      await t.close();
      await db.close();
    }
  });
});
