import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../../src/db/database.ts';
import { defineProcess } from '../../../src/index.ts';
import { newMessageId, newOrderId, processManagerOn } from '../../process/support/process-harness.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/**
 * Review 39. A transition's code may throw anything; a value with no usable toString (a
 * null-prototype object, as some decoders and RPC clients throw) makes `String(err)` itself throw.
 * Flows record such a value since review 35 (serializeError's asText). The process managers' failure
 * text is `errorMessage(err)` = `String(err)`:
 *
 * - deliver: the failure record's transaction throws while building the record, so nothing is ever
 *   recorded and the instance is never quarantined (seed 002's budget never starts), however long
 *   the message keeps failing;
 * - the timeout pass: `errorMessage(err)` throws inside the pass's catch, so the pass itself rejects,
 *   the timer gets no retry time, and it is claimed first again on every pass: an earlier due timer
 *   of one instance stops every other instance's timeouts.
 */
const nothingToSay = () => Object.create(null) as object;

const desk = defineProcess({
  name: 'review39-desk',
  states: ['Open', 'Waiting', 'Closed', 'Escalated'],
  initial: 'Open',
  final: ['Closed', 'Escalated'],
  data: z.object({ key: z.string(), poison: z.boolean() }),
  initialData: (key) => ({ key, poison: false }),
  messages: {
    Wait: z.object({ key: z.string(), poison: z.boolean() }),
    Close: z.object({ key: z.string() }),
  },
  correlate: (m) => m.payload.key,
  timeouts: { escalate: { afterMs: 60_000, expects: 'Waiting' } },
  on: {
    Wait: [
      { from: 'Open', to: 'Waiting', schedule: ['escalate'], then: (d, p) => ({ data: { ...d, poison: p.poison } }) },
    ],
    Close: [
      {
        from: ['Open', 'Waiting'],
        to: 'Closed',
        then: () => {
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- the point: a value that is not an Error
          throw nothingToSay();
        },
      },
    ],
    escalate: [
      {
        from: 'Waiting',
        to: 'Escalated',
        then: (d) => {
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- the point: a value that is not an Error
          if (d.poison) throw nothingToSay();
          return {};
        },
      },
    ],
  },
});

describe(`a transition that throws a value without a usable toString (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('deliver: the failure is recorded, and past the budget the instance is quarantined', async () => {
    const { pm, clock } = processManagerOn(db, { processes: [desk], config: { quarantine_after_seconds: 1 } });
    const key = newOrderId();
    const close = { id: newMessageId('close'), type: 'Close', payload: { key } };
    await expect(pm.deliver(desk, close)).rejects.toBeDefined();
    const instance = await db.prisma.sagaInstance.findUnique({
      where: { process_name_correlation_key: { process_name: desk.name, correlation_key: key } },
    });
    clock.advance(1_000);
    const second = await pm.deliver(desk, close).then(
      (r) => r.outcome,
      () => 'threw again',
    );
    expect.soft(instance?.failure_redelivery_key ?? null).toBe(close.id);
    expect(second).toBe('quarantined');
  });

  it("the timeout pass: one instance's poisoned timer does not stop another instance's timer", async () => {
    const { pm, clock } = processManagerOn(db, { processes: [desk] });
    const [poisoned, healthy] = [newOrderId(), newOrderId()];
    await pm.deliver(desk, { id: newMessageId('wait'), type: 'Wait', payload: { key: poisoned, poison: true } });
    clock.advance(1);
    const healthyId = (
      await pm.deliver(desk, { id: newMessageId('wait'), type: 'Wait', payload: { key: healthy, poison: false } })
    ).instanceId!;
    clock.advance(60_000);

    const pass = await pm.sweepProcessTimeouts().then(
      (r) => r,
      (err: unknown) => `the pass threw: ${err instanceof Error ? err.message : typeof err}`,
    );
    expect.soft(pass).toMatchObject({ delivered: 1, failed: 1 });
    // However many passes run: the poisoned timer is claimed first each time.
    for (let i = 0; i < 3; i++) await pm.sweepProcessTimeouts().catch(() => undefined);
    expect((await pm.find(healthyId))?.currentState).toBe('Escalated');
  });
});
