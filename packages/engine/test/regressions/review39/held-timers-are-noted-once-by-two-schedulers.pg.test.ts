import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { recordHeldTimeouts } from '../../../src/store/record-held-timeouts.ts';
import { twoHours } from '../../process/support/order-fulfilment.ts';
import { msg, newOrderId, processManagerOn } from '../../process/support/process-harness.ts';
import { openTestDatabase } from '../../support/test-database.ts';

/**
 * ADR 0008: a quarantined instance's timers "stay armed (Pending) and fire after release; the sweep
 * notes each due one once in the history". Each replica's timeout scheduler begins its pass with the
 * note (recordHeldTimeouts: one INSERT … SELECT … WHERE NOT EXISTS a note, under FOR KEY SHARE SKIP
 * LOCKED, which two passes both get). Two replicas whose passes overlap: the second statement's
 * snapshot does not see the first's uncommitted note, and nothing unique stops the second insert.
 *
 * Replica A's pass is held in flight here as the product's own statement in an open transaction
 * (a gate, no sleeping); replica B's pass runs whole meanwhile; then A commits.
 */
describe('held timers noted by two overlapping timeout passes (postgres)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
  });
  afterAll(async () => {
    await db.close();
  });

  it("a quarantined instance's due timer is noted once in its history", async () => {
    const { pm, clock } = processManagerOn(db, { config: { quarantine_after_seconds: 1 } });
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    await pm.deliver('order-fulfilment', msg.inventoryReserved(order)); // BookingShipment, 2 h timeout
    const poison = msg.note(order, 'poison pill');
    await expect(pm.deliver('order-fulfilment', poison)).rejects.toThrow('cannot handle note');
    clock.advance(1_000);
    const id = (await pm.deliver('order-fulfilment', poison)).instanceId!;
    expect((await pm.find(id))?.status).toBe('QUARANTINED');
    clock.advance(twoHours);

    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let noted!: (n: number) => void;
    const aNoted = new Promise<number>((r) => (noted = r));
    const replicaA = db.prisma.$transaction(
      async (tx) => {
        noted(await recordHeldTimeouts(tx, { now: clock.now(), processNames: ['order-fulfilment'] }));
        await gate;
      },
      { timeout: 60_000 },
    );
    expect(await aNoted).toBe(1);

    const replicaB = processManagerOn(db, { clock, config: { quarantine_after_seconds: 1 } });
    await replicaB.pm.sweepProcessTimeouts();
    release();
    await replicaA;

    const notes = (await pm.history(id)).transitions.filter(
      (t) => t.outcome === 'skipped_quarantined' && t.messageType === 'ShipmentTimeout',
    );
    const timers = await db.prisma.processTimeout.findMany({ where: { instance_id: id } });
    expect(timers.map((t) => t.status)).toEqual(['Pending']);
    expect(notes.map((n) => n.messageId)).toEqual([timers[0]!.id]);
  });
});
