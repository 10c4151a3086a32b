import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { twoHours } from '../../process/support/order-fulfilment.ts';
import { msg, newOrderId, processManagerOn, rowsOf } from '../../process/support/process-harness.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * Review 29, attack 2 (a timeout of a quarantined instance) seen from the OTHER instances. Seed
 * 002: a quarantined instance stops; "the other instances of the saga keep getting their events".
 * Each timeout pass first notes the due timers of quarantined instances (recordHeldTimeouts): one
 * autocommitted INSERT … SELECT of history rows, with no time limit, whose foreign key to the
 * instance takes a key-share lock on each quarantined instance's row. While any transaction holds
 * such a row (a host transaction that delivered a message to it, `deliver(…, { tx })`, which skips
 * it and keeps its lock until the host commits; a release applying its kept messages), the whole
 * pass waits there, and no timeout of any instance fires, for as long as that transaction stays open.
 *
 * The second case: the pass delivers one due timeout at a time, each in a transaction limited by
 * `processes.transaction_timeout_ms`; its `select … for update` of the instance has no lock or
 * statement timeout, so a timeout of an instance a host transaction holds stops the pass (and every
 * later timeout) past that limit, until the host commits.
 */
describe('a timeout pass behind an instance row a transaction holds (postgres)', () => {
  let db: Database & { url?: string };
  let host: pg.Client;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    host = new pg.Client({ connectionString: db.url });
    await host.connect();
  });
  afterAll(async () => {
    await host.query('ROLLBACK').catch(() => undefined);
    await host.end();
    await db.close();
  });

  it("another instance's due timeout fires while a host transaction holds the quarantined one", async () => {
    const { pm, clock } = processManagerOn(db, { config: { quarantine_after_seconds: 1 } });
    const [held, other] = [newOrderId(), newOrderId()];
    for (const order of [held, other]) {
      await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
      await pm.deliver('order-fulfilment', msg.inventoryReserved(order)); // BookingShipment, 2 h timeout
    }
    const poison = msg.note(held, 'poison pill');
    await expect(pm.deliver('order-fulfilment', poison)).rejects.toThrow('cannot handle note');
    clock.advance(1_000);
    expect((await pm.deliver('order-fulfilment', poison)).outcome).toBe('quarantined');
    clock.advance(twoHours); // both shipment timeouts are due

    // The host delivers a message to the quarantined instance in its own transaction, then goes on
    // with its own work (here: it simply has not committed yet).
    await host.query('BEGIN');
    const skipped = await pm.deliver('order-fulfilment', msg.note(held, 'still there?'), { tx: host });
    expect(skipped.outcome).toBe('skipped_quarantined');

    const sweep = pm.sweepProcessTimeouts();
    const first = await Promise.race([
      sweep.then(() => 'the pass finished' as const),
      waitFor(
        'the pass to finish or to wait for a lock',
        async () => {
          // The statement that notes held timers, waiting for a lock.
          const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
            select count(*)::int as n from pg_stat_activity
             where datname = current_database() and wait_event_type = 'Lock'
               and query like '%held until release%'`;
          return (row?.n ?? 0) > 0 ? ('the pass is waiting for a lock' as const) : undefined;
        },
        30_000,
      ),
    ]);
    const otherTimeout = (await rowsOf(db, other)).timeouts.map((t) => t.status);
    const otherState = (await rowsOf(db, other)).instance?.current_state;
    await host.query('COMMIT');
    // Once the host commits the pass goes on: the other instance's timeout is late, not lost.
    expect(await sweep).toMatchObject({ delivered: 1, failed: 0 });

    expect({ first, otherTimeout, otherState }).toEqual({
      first: 'the pass finished',
      otherTimeout: ['Delivered'],
      otherState: 'Refunding',
    });
  });
  it('with a 1 s transaction limit, a pass does not wait longer than that behind an ACTIVE instance a host transaction holds', async () => {
    const { pm, clock } = processManagerOn(db, { config: { transaction_timeout_ms: 1000 } });
    const [held, other] = [newOrderId(), newOrderId()];
    for (const order of [held, other]) {
      await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
      await pm.deliver('order-fulfilment', msg.inventoryReserved(order)); // BookingShipment, 2 h timeout
      clock.advance(10); // the held instance's timeout is due first, so the pass claims it first
    }
    clock.advance(twoHours);
    await host.query('BEGIN');
    expect((await pm.deliver('order-fulfilment', msg.note(held, 'a note'), { tx: host })).outcome).toBe('applied');

    const sweep = pm.sweepProcessTimeouts();
    const first = await Promise.race([
      sweep.then(() => 'the pass finished' as const),
      waitFor(
        'the pass to finish or to wait for the instance lock three times its transaction limit',
        async () => {
          const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
            select count(*)::int as n from pg_stat_activity
             where datname = current_database() and wait_event_type = 'Lock'
               and now() - query_start > interval '3 seconds'`;
          return (row?.n ?? 0) > 0 ? ('the pass waited past 3 s for a lock' as const) : undefined;
        },
        30_000,
      ),
    ]);
    const otherTimeout = (await rowsOf(db, other)).timeouts.map((t) => t.status);
    await host.query('COMMIT');
    await sweep;
    expect({ first, otherTimeout }).toEqual({ first: 'the pass finished', otherTimeout: ['Delivered'] });
  });
});
