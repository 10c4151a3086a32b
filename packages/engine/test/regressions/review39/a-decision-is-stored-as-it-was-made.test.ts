import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../../src/db/database.ts';
import { defineProcess, type Json } from '../../../src/index.ts';
import { newMessageId, newOrderId, processManagerOn } from '../../process/support/process-harness.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/**
 * Review 39. ADR 0013 / ARCHITECTURE invariant 6: values JSON cannot hold are refused, never
 * converted; an unstorable action output is the action's failure, never stored converted. A process
 * transition's `then` is the process's own code, like an action: what it decides to send (an outbox
 * command's payload, a timeout's payload) must be stored as decided, or be that message's failure.
 * The payloads below are built at run time from the message (as a real `then` does), so the types
 * allow them.
 */
const odd = { value: 'nan' as 'nan' | 'date' | 'undefined' };
const oddValue = (): unknown =>
  odd.value === 'nan' ? Number.NaN : odd.value === 'date' ? new Date('2026-03-01T10:00:00Z') : undefined;

const billing = defineProcess({
  name: 'review39-billing',
  states: ['Open', 'Charging', 'Done'],
  initial: 'Open',
  final: ['Done'],
  data: z.object({ key: z.string() }),
  initialData: (key) => ({ key }),
  messages: { Charge: z.object({ key: z.string(), amount: z.number() }) },
  correlate: (m) => m.payload.key,
  timeouts: { chargeLate: { afterMs: 60_000, expects: 'Charging' } },
  on: {
    Charge: [
      {
        from: 'Open',
        to: 'Charging',
        then: (d, p) => ({
          emit: [
            {
              type: 'ChargeCard',
              destination: 'payments',
              payload: { key: d.key, amount: p.amount, at: oddValue() } as unknown as Json,
            },
          ],
        }),
      },
    ],
  },
});

const reminder = defineProcess({
  name: 'review39-reminder',
  states: ['Open', 'Waiting', 'Done'],
  initial: 'Open',
  final: ['Done'],
  data: z.object({ key: z.string() }),
  initialData: (key) => ({ key }),
  messages: { Start: z.object({ key: z.string() }) },
  correlate: (m) => m.payload.key,
  timeouts: { nudge: { afterMs: 60_000, expects: 'Waiting' } },
  on: {
    Start: [
      {
        from: 'Open',
        to: 'Waiting',
        then: () => ({
          schedule: [{ name: 'nudge', payload: { at: oddValue() } as unknown as { [k: string]: Json } }],
        }),
      },
    ],
    nudge: [{ from: 'Waiting', to: 'Done' }],
  },
});

describe(`a transition's commands and timers are stored as decided, or the message fails (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const value of ['nan', 'date', 'undefined'] as const) {
    it(`a command whose payload holds ${value} is never queued converted`, async () => {
      odd.value = value;
      const { pm } = processManagerOn(db, { processes: [billing] });
      const key = newOrderId();
      const delivered = await pm
        .deliver(billing, { id: newMessageId('charge'), type: 'Charge', payload: { key, amount: 12 } })
        .then(
          (r) => r.outcome,
          (err: unknown) => `threw: ${err instanceof Error ? err.message : String(err)}`,
        );
      const instance = await db.prisma.sagaInstance.findUnique({
        where: { process_name_correlation_key: { process_name: billing.name, correlation_key: key } },
      });
      const rows = instance ? await db.prisma.outboxMessage.findMany({ where: { source_id: instance.id } }) : [];
      // What must not happen: applied, with a payload that reads back as something else (NaN → null,
      // a Date → a string, an undefined key dropped). The message fails (like an unstorable action
      // output) and nothing is queued.
      expect.soft(rows.map((r) => r.payload)).toEqual([]);
      expect(delivered).toMatch(/^threw: .*at/);
    });
  }

  it('a timer whose payload holds a Date is never armed converted', async () => {
    odd.value = 'date';
    const { pm } = processManagerOn(db, { processes: [reminder] });
    const key = newOrderId();
    const delivered = await pm.deliver(reminder, { id: newMessageId('start'), type: 'Start', payload: { key } }).then(
      (r) => r.outcome,
      (err: unknown) => `threw: ${err instanceof Error ? err.message : String(err)}`,
    );
    const instance = await db.prisma.sagaInstance.findUnique({
      where: { process_name_correlation_key: { process_name: reminder.name, correlation_key: key } },
    });
    const timers = instance ? await db.prisma.processTimeout.findMany({ where: { instance_id: instance.id } }) : [];
    expect.soft(timers.map((t) => t.payload)).toEqual([]);
    expect(delivered).toMatch(/^threw: .*at/);
  });
});
