import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../../src/db/database.ts';
import { defineProcess } from '../../../src/index.ts';
import { msg, newMessageId, newOrderId, processManagerOn } from '../../process/support/process-harness.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/**
 * Review 29. Seed 004's `fulfilment_transitions_total{from,to}` is read from the history: the
 * control plane's counter and the overview's chart count the rows whose outcome is `applied` or
 * `repair` (an operator command writes one `repair` row; a message one `applied` row). A release by
 * retry that moves the instance writes BOTH for its one transition: the `applied` row of the
 * message (detail `{ release: 'retry' }`) and the release's `repair` audit row with the same from
 * and to. The instance's state and its history then disagree on how many transitions it made.
 */
const switches = { closing: 'broken' as 'broken' | 'fixed' };
const desk = defineProcess({
  name: 'review29-desk',
  states: ['Open', 'Closed'],
  initial: 'Open',
  final: ['Closed'],
  data: z.object({ key: z.string() }),
  initialData: (key) => ({ key }),
  messages: { Opened: z.object({ key: z.string() }), Close: z.object({ key: z.string() }) },
  correlate: (m) => m.payload.key,
  on: {
    Opened: [{ from: 'Open', to: 'Open' }],
    Close: [
      {
        from: 'Open',
        to: 'Closed',
        then: () => {
          if (switches.closing === 'broken') throw new Error('the desk cannot close yet');
          return {};
        },
      },
    ],
  },
});

describe(`a release by retry is one transition in the history (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('Open → Closed by a release counts once among the applied and repair rows', async () => {
    const { pm, clock } = processManagerOn(db, { processes: [desk], config: { quarantine_after_seconds: 1 } });
    const key = newOrderId();
    await pm.deliver(desk, { id: newMessageId('open'), type: 'Opened', payload: { key } });
    const close = { id: newMessageId('close'), type: 'Close', payload: { key } };
    switches.closing = 'broken';
    await expect(pm.deliver(desk, close)).rejects.toThrow('cannot close');
    clock.advance(1_000);
    const id = (await pm.deliver(desk, close)).instanceId!;
    switches.closing = 'fixed';
    expect(await pm.release(id, { mode: 'retry', operator: 'ops', reason: 'fixed' })).toMatchObject({
      outcome: 'applied',
      from: 'Open',
      to: 'Closed',
    });
    expect(await pm.find(id)).toMatchObject({ status: 'COMPLETED', currentState: 'Closed' });

    const counted = (await pm.history(id)).transitions
      .filter((t) => t.outcome === 'applied' || t.outcome === 'repair')
      .filter((t) => t.from === 'Open' && t.to === 'Closed')
      .map((t) => t.outcome);
    expect(counted).toHaveLength(1);
  });
});

/**
 * Review 29. Seed 002's failure record holds the failing event's redelivery key and "its global
 * position where the feed assigns one"; ADR 0012: skipped is kept, position included. A message an
 * instance skipped while quarantined is kept in its history row with its payload, but without its
 * position. When that kept message then fails as a release applies it, the instance is quarantined
 * again on it and its failure record (and, once skipped, the release's audit row) says position null.
 */
describe(`a kept message keeps its position (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('quarantined again on a kept message: the failure record and the skip audit carry its position', async () => {
    const { pm, clock } = processManagerOn(db, { config: { quarantine_after_seconds: 1 } });
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    const first = { ...msg.note(order, 'poison one'), position: 41 };
    await expect(pm.deliver('order-fulfilment', first)).rejects.toThrow('cannot handle note');
    clock.advance(1_000);
    const id = (await pm.deliver('order-fulfilment', first)).instanceId!;
    expect(await pm.find(id)).toMatchObject({ status: 'QUARANTINED', failure: { position: '41' } });

    const second = { ...msg.note(order, 'poison two'), position: 42 };
    expect((await pm.deliver('order-fulfilment', second)).outcome).toBe('skipped_quarantined');
    const released = await pm.release(id, { mode: 'skip', operator: 'ops', reason: 'first poison' });
    expect(released.stoppedOn?.messageId).toBe(second.id);

    const again = await pm.find(id);
    expect.soft(again?.failure).toMatchObject({ redeliveryKey: second.id, position: '42' });
    await pm.release(id, { mode: 'skip', operator: 'ops', reason: 'second poison' });
    const audit = (await pm.history(id)).transitions.filter((t) => t.outcome === 'repair').at(-1);
    expect(audit?.detail).toMatchObject({ skippedMessage: { id: second.id, position: '42' } });
  });
});
