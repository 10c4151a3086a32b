import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../../src/db/database.ts';
import { defineProcess } from '../../../src/index.ts';
import { createTestEngine } from '../../../src/testing/create-test-engine.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { orderFulfilment, twoHours } from '../../process/support/order-fulfilment.ts';
import { msg, newMessageId, newOrderId, processManagerOn, rowsOf } from '../../process/support/process-harness.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/** A gate a fault hook waits on: `reached` resolves when the hook gets there, `open()` lets it go on. */
function gate() {
  let open!: () => void;
  let reached!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const arrived = new Promise<void>((r) => (reached = r));
  return { opened, arrived, open, reached };
}

/** Backends of this database waiting for a heavyweight lock (a row lock's queue) right now. */
async function waitingOnLocks(db: Database): Promise<number> {
  const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
    select count(*)::int as n from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock'`;
  return row?.n ?? 0;
}

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error: error as { code?: string } }),
  );

/**
 * Review 29, attacks 1, 2 and 3 on real concurrent connections, every overlap made by progress (a
 * fault hook holding a transaction at a known point, backends seen waiting in pg_stat_activity).
 */
describe('releases, timeouts and repairs racing deliveries on one instance (postgres)', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 16 });
  });
  afterAll(async () => {
    await db.close();
  });

  it('a release held mid-way while new messages, redeliveries of kept ones, a sweep and a repair arrive: nothing lost, nothing twice, order kept', async () => {
    let hold: ReturnType<typeof gate> | null = null;
    let holdAt = '';
    const clock = new TestClock(new Date('2026-03-01T10:00:00.000Z'));
    const { pm } = processManagerOn(db, {
      clock,
      config: { quarantine_after_seconds: 1 },
      faults: {
        afterLock: async ({ messageId }) => {
          if (hold && messageId === holdAt) {
            hold.reached();
            await hold.opened;
          }
        },
      },
    });
    const t = await createTestEngine({ db, clock, flows: [], actions: [], processes: [orderFulfilment()] });
    try {
      const order = newOrderId();
      await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
      await pm.deliver('order-fulfilment', msg.inventoryReserved(order)); // BookingShipment, 2 h timeout armed
      const poison = msg.note(order, 'poison pill');
      await expect(pm.deliver('order-fulfilment', poison)).rejects.toThrow('cannot handle note');
      clock.advance(1_000);
      expect((await pm.deliver('order-fulfilment', poison)).outcome).toBe('quarantined');
      const kept = Array.from({ length: 5 }, (_, i) => msg.note(order, `kept ${i + 1}`));
      for (const k of kept) expect((await pm.deliver('order-fulfilment', k)).outcome).toBe('skipped_quarantined');
      const quarantined = (await rowsOf(db, order)).instance!;
      clock.advance(twoHours); // the shipment timeout is due while the instance is quarantined

      // The release stops while applying the third kept message, holding the instance's lock.
      hold = gate();
      holdAt = kept[2]!.id;
      const release = pm.release(quarantined.id, { mode: 'skip', operator: 'ops', reason: 'unfileable note' });
      await hold.arrived;
      // A sweep meanwhile passes over the instance the release holds (SKIP LOCKED: it neither notes nor
      // claims its timer) and ends at once; the timer fires on a sweep after the release.
      const sweep = await pm.sweepProcessTimeouts();
      expect(sweep).toEqual({ delivered: 0, failed: 0 });
      const fresh = Array.from({ length: 3 }, (_, i) => msg.note(order, `fresh ${i + 1}`));
      const racing = [
        ...fresh.map((m) => settle(pm.deliver('order-fulfilment', m))),
        settle(pm.deliver('order-fulfilment', kept[0]!)), // already applied by the release, uncommitted
        settle(pm.deliver('order-fulfilment', kept[3]!)), // not yet applied by the release
        settle(
          t.engine.repairs.apply({
            kind: 'instance.force_transition',
            target: { instanceId: quarantined.id },
            expected: { state: 'BookingShipment', version: quarantined.version },
            to: 'Refunding',
            actor: 'ops',
            reason: 'drafted while it was quarantined',
            idempotencyKey: randomUUID(),
          }),
        ),
      ];
      await waitFor(
        'the five deliveries and the repair to queue behind the release',
        async () => ((await waitingOnLocks(db)) >= 6 ? true : undefined),
        30_000,
      );
      hold.open();
      const released = await release;
      const [f1, f2, f3, redeliveredApplied, redeliveredPending, repair] = await Promise.all(racing);

      expect(released.resumed).toEqual(kept.map((k) => ({ messageId: k.id, outcome: 'applied' })));
      expect(released.stoppedOn).toBeNull();
      for (const f of [f1, f2, f3]) expect(f).toMatchObject({ ok: true, value: { outcome: 'applied' } });
      expect(redeliveredApplied).toMatchObject({ ok: true, value: { outcome: 'duplicate' } });
      expect(redeliveredPending).toMatchObject({ ok: true, value: { outcome: 'duplicate' } });
      expect(repair).toMatchObject({ ok: false, error: { code: 'repair_conflict' } });

      // The due timeout fires after the release, once, in its own visit.
      const raced = sweep;
      const next = await pm.sweepProcessTimeouts();
      expect({ failed: raced.failed + next.failed, delivered: raced.delivered + next.delivered }).toEqual({
        failed: 0,
        delivered: 1,
      });

      const rows = await rowsOf(db, order);
      const notes = (rows.instance!.state as { notes: string[] }).notes;
      expect(notes.slice(0, 5)).toEqual(kept.map((k) => k.payload.note));
      expect([...notes.slice(5)].sort()).toEqual(fresh.map((f) => f.payload.note).sort());
      expect(rows.instance).toMatchObject({ status: 'ACTIVE', current_state: 'Refunding' });
      expect(rows.timeouts.map((x) => x.status)).toEqual(['Delivered']);
      expect(rows.outbox.map((x) => x.type).sort()).toEqual([
        'BookShipment',
        'RefundPayment',
        'ReleaseInventory',
        'ReserveInventory',
      ]);
      const inbox = rows.inbox.map((r) => r.message_id);
      expect(new Set(inbox).size).toBe(inbox.length);
      // paid, reserved, poison (skipped), 5 kept, 3 fresh, the timeout
      expect(inbox).toHaveLength(12);
      expect(rows.transitions.filter((x) => x.outcome === 'applied')).toHaveLength(2 + 5 + 3 + 1);
    } finally {
      hold?.open();
      await t.close();
    }
  });

  it('a timeout due while a move out of its state and back is uncommitted is passed over, then found stale once the move commits', async () => {
    const alarm = defineProcess({
      name: 'review29-alarm',
      states: ['Idle', 'Waiting', 'Cancelled', 'Rang'],
      initial: 'Idle',
      final: ['Rang'],
      data: z.object({ key: z.string() }),
      initialData: (key) => ({ key }),
      messages: { Arm: z.object({ key: z.string() }), Cancel: z.object({ key: z.string() }) },
      correlate: (m) => m.payload.key,
      timeouts: { Ring: { afterMs: 5_000, expects: 'Waiting' } },
      on: {
        Arm: [{ from: ['Idle', 'Cancelled'], to: 'Waiting', schedule: ['Ring'] }],
        Cancel: [{ from: 'Waiting', to: 'Cancelled' }],
        Ring: [{ from: 'Waiting', to: 'Rang' }],
      },
    });
    const clock = new TestClock(new Date('2026-03-01T10:00:00.000Z'));
    const { pm } = processManagerOn(db, { processes: [alarm], clock });
    const key = newOrderId();
    const send = (type: 'Arm' | 'Cancel') => ({ id: newMessageId(type), type, payload: { key } });
    const armed = await pm.deliver(alarm, send('Arm'));
    const id = armed.instanceId!;
    clock.advance(5_000); // the first visit's Ring is due

    // A host transaction moves the instance out of Waiting and back (uncommitted, holding its row);
    // a sweep meanwhile passes over the instance (its claim locks the instance SKIP LOCKED) and claims
    // nothing. Once the move commits, the first visit's due Ring is claimed and found stale.
    const host = new pg.Client({ connectionString: db.url });
    await host.connect();
    try {
      await host.query('BEGIN');
      const cancel = await pm.deliver(alarm, send('Cancel'), { tx: host });
      const rearm = await pm.deliver(alarm, send('Arm'), { tx: host });
      expect([cancel.outcome, rearm.outcome]).toEqual(['applied', 'applied']);
      expect(await pm.sweepProcessTimeouts()).toEqual({ delivered: 0, failed: 0 });
      await host.query('COMMIT');
      expect(await pm.sweepProcessTimeouts()).toMatchObject({ delivered: 1, failed: 0 });
    } finally {
      await host.query('ROLLBACK').catch(() => undefined);
      await host.end();
    }

    const history = (await pm.history(id)).transitions.map((x) => [x.messageType, x.outcome, x.to]);
    expect(history).toEqual([
      ['Arm', 'applied', 'Waiting'],
      ['Cancel', 'applied', 'Cancelled'],
      ['Arm', 'applied', 'Waiting'],
      ['Ring', 'ignored', 'Waiting'],
    ]);
    expect(await pm.find(id)).toMatchObject({ currentState: 'Waiting' });
    // The second visit's own Ring fires at its own time.
    clock.advance(5_000);
    expect(await pm.sweepProcessTimeouts()).toMatchObject({ delivered: 1 });
    expect(await pm.find(id)).toMatchObject({ currentState: 'Rang', status: 'COMPLETED' });
  });
});
