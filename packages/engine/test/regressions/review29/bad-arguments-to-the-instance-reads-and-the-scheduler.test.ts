import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { ProcessManager } from '../../../src/index.ts';
import { msg, newOrderId, processManagerOn } from '../../process/support/process-harness.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/**
 * Review 29, attack 5. Invariant 6 and ADR 0013: bad input to any API gets a clear `invalid_input`
 * naming the field, never a driver error, and values JSON cannot represent (NaN) are refused, never
 * converted. wave2's bad-input file covers deliver, runOperatorCommand and release; these are the
 * process manager's other public entries, where an embedding service passes values straight in
 * (the control plane checks its own inputs first, an embedder need not).
 */
describe(`bad arguments to the instance reads and the timeout scheduler (${testDbKind()})`, () => {
  let db: Database;
  let pm: ProcessManager;
  let instanceId: string;
  beforeAll(async () => {
    db = await openTestDatabase();
    pm = processManagerOn(db).pm;
    instanceId = (await pm.deliver('order-fulfilment', msg.paymentCaptured(newOrderId()))).instanceId!;
  });
  afterAll(async () => {
    await pm.stopTimeoutScheduler();
    await db.close();
  });

  /** What the call did: its value's kind, or its error's class, code and field. */
  async function outcome(call: () => unknown) {
    try {
      const value: unknown = await call();
      return { returned: Array.isArray(value) ? 'an array' : typeof value };
    } catch (err) {
      const e = err as { name?: string; code?: string; field?: string | null };
      return { name: e.name, code: e.code, field: e.field ?? null };
    }
  }

  const cases: { label: string; field: string; call: () => unknown }[] = [
    {
      label: 'findByStatus with a NUL in processName',
      field: 'processName',
      call: () => pm.findByStatus('ACTIVE', new Date(), 10, { processName: 'order-\u0000fulfilment' }),
    },
    {
      label: 'findByStatus with a number for processName',
      field: 'processName',
      call: () => pm.findByStatus('ACTIVE', new Date(), 10, { processName: 5 as never }),
    },
    { label: 'history with limit NaN', field: 'limit', call: () => pm.history(instanceId, { limit: Number.NaN }) },
    {
      label: 'sweepProcessTimeouts with limit NaN',
      field: 'limit',
      call: () => pm.sweepProcessTimeouts({ limit: Number.NaN }),
    },
    {
      label: 'startTimeoutScheduler with intervalMs NaN',
      field: 'intervalMs',
      call: () => pm.startTimeoutScheduler({ intervalMs: Number.NaN }),
    },
  ];

  for (const c of cases)
    it(`${c.label}: refused as invalid_input naming ${c.field}`, async () => {
      try {
        expect(await outcome(c.call)).toEqual({ name: 'EngineError', code: 'invalid_input', field: c.field });
      } finally {
        await pm.stopTimeoutScheduler();
      }
    });
});
