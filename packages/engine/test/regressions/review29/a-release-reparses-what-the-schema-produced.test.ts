import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../../src/db/database.ts';
import { defineProcess } from '../../../src/index.ts';
import { newMessageId, newOrderId, processManagerOn } from '../../process/support/process-harness.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/**
 * Review 29. A release must lose nothing: the message an instance stopped on is retried, and the
 * messages it kept while quarantined are applied in order (ADR 0008). Both are stored when they
 * arrive and validated again by the release. What is stored is the payload the schema PRODUCED
 * (parseMessage's output), not the payload that was received; a schema whose output is not valid
 * input of itself (a transform such as `z.string().transform(Number)`, a common way to read a
 * decimal amount sent as text) then refuses its own stored message at release time.
 */
const ledger = { broken: false };

const tally = defineProcess({
  name: 'review29-tally',
  states: ['Open', 'Closed'],
  initial: 'Open',
  final: ['Closed'],
  data: z.object({ key: z.string(), total: z.number(), notes: z.array(z.string()) }),
  initialData: (key) => ({ key, total: 0, notes: [] }),
  messages: {
    Opened: z.object({ key: z.string() }),
    // Received as text ("12.5"); the process adds it as a number.
    AmountAdded: z.object({ key: z.string(), amount: z.string().transform(Number) }),
    NoteAdded: z.object({ key: z.string(), note: z.string() }),
  },
  correlate: (m) => m.payload.key,
  on: {
    Opened: [{ from: 'Open', to: 'Open' }],
    AmountAdded: [
      {
        from: 'Open',
        to: 'Open',
        then: (d, p) => {
          if (ledger.broken) throw new Error('the ledger is down');
          return { data: { ...d, total: d.total + p.amount } };
        },
      },
    ],
    NoteAdded: [
      {
        from: 'Open',
        to: 'Open',
        then: (d, p) => {
          if (p.note.startsWith('poison')) throw new Error(`cannot file note "${p.note}"`);
          return { data: { ...d, notes: [...d.notes, p.note] } };
        },
      },
    ],
  },
});

describe(`a release validates again what the schema produced, not what was received (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  /** An open tally instance, quarantined on `stopOn` (delivered twice across the 1 s budget). */
  async function quarantinedOn(pm: ReturnType<typeof processManagerOn>, key: string, stopOn: object) {
    await pm.pm.deliver(tally, { id: newMessageId('open'), type: 'Opened', payload: { key } });
    await expect(pm.pm.deliver(tally, stopOn as never)).rejects.toThrow();
    pm.clock.advance(1_000);
    const q = await pm.pm.deliver(tally, stopOn as never);
    expect(q.outcome).toBe('quarantined');
    return q.instanceId!;
  }

  it('retry: the amount it stopped on is applied once the cause is fixed (it is not refused as "expected string")', async () => {
    const h = processManagerOn(db, { processes: [tally], config: { quarantine_after_seconds: 1 } });
    const key = newOrderId();
    ledger.broken = true;
    const amount = { id: newMessageId('amount'), type: 'AmountAdded', payload: { key, amount: '12.5' } };
    const id = await quarantinedOn(h, key, amount);
    ledger.broken = false;
    // The same payload, delivered as received, is valid: the ledger is fixed.
    const released = await h.pm.release(id, { mode: 'retry', operator: 'ops', reason: 'ledger is back' }).then(
      (r) => ({ outcome: r.outcome, error: null as string | null }),
      (e: unknown) => ({ outcome: 'threw', error: (e as Error).message }),
    );
    expect(released).toEqual({ outcome: 'applied', error: null });
    expect(await h.pm.find(id)).toMatchObject({ status: 'ACTIVE', state: { total: 12.5 } });
  });

  it('kept: an amount that arrived while quarantined is applied by the release, not quarantined again', async () => {
    const h = processManagerOn(db, { processes: [tally], config: { quarantine_after_seconds: 1 } });
    const key = newOrderId();
    const poison = { id: newMessageId('poison'), type: 'NoteAdded', payload: { key, note: 'poison pill' } };
    const id = await quarantinedOn(h, key, poison);
    const kept = { id: newMessageId('amount'), type: 'AmountAdded', payload: { key, amount: '7' } };
    expect((await h.pm.deliver(tally, kept)).outcome).toBe('skipped_quarantined');

    const released = await h.pm.release(id, { mode: 'skip', operator: 'ops', reason: 'unfileable note' });
    expect({ resumed: released.resumed, stoppedOn: released.stoppedOn?.message ?? null }).toEqual({
      resumed: [{ messageId: kept.id, outcome: 'applied' }],
      stoppedOn: null,
    });
    expect(await h.pm.find(id)).toMatchObject({ status: 'ACTIVE', state: { total: 7 } });
  });
});
