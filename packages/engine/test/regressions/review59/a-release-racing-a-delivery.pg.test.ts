import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RepairCommand } from '../../../src/index.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import pg from 'pg';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitForWaiters } from '../../support/held-rows.ts';
import { waitFor } from '../../support/wait-for.ts';
import { fulfil, rowsOf } from './support/fulfil-model.ts';

/**
 * Review 59 (PostgreSQL, two replicas). ADR 0008: a quarantined instance keeps the messages it skips
 * and a release applies them, in arrival order, in its own transaction; "nothing addressed to the
 * instance is lost; a later redelivery is then a duplicate". A message arriving on another replica
 * while the release runs is either kept (and applied by the release) or applied after it: once,
 * never lost, never twice.
 */
describe('review 59: a release racing a delivery on another replica (postgres)', () => {
  let db!: Awaited<ReturnType<typeof openTestDatabase>>;
  let t!: TestEngine;
  let b!: TestEngine;
  const config = {
    processes: { quarantine_after_seconds: 5, store_retry: { max_attempts: 1 }, transaction_timeout_ms: 20_000 },
  };
  beforeAll(async () => {
    db = await openTestDatabase();
    t = await createTestEngine({ db, flows: [], actions: [], processes: [fulfil], config });
    b = await createTestEngine({ db, clock: t.clock, flows: [], actions: [], processes: [fulfil], config });
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
    await db?.close();
  });

  /**
   * Even rounds: both start at once (the delivery usually locks first). Odd rounds: a session of the
   * test's own holds the instance row; the release queues on it first, then the delivery, and the row
   * is let go, so the release locks first and the message waits for it.
   */
  async function race(round: number, id: string, deliver: () => Promise<string>, release: () => Promise<string>) {
    if (round % 2 === 0) return Promise.all([deliver(), release()]);
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      const pid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      await holder.query('begin');
      await holder.query('select id from sagaflow.saga_instances where id = $1 for update', [id]);
      const released = release();
      await waitForWaiters(db, pid, 1);
      const delivered = deliver();
      // The second waits on the first (the tuple's lock queue), not on the holder: count lock waits.
      await waitFor('the delivery to wait behind the release', async () => {
        const [r] = await db.prisma.$queryRaw<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock'`;
        return r!.n >= 2 ? true : undefined;
      });
      await holder.query('commit');
      return Promise.all([delivered, released]);
    } finally {
      await holder.end();
    }
  }

  it('the message is applied exactly once, with one send and one deadline, whichever commits first', async () => {
    const seen: string[] = [];
    for (let round = 0; round < 12; round++) {
      const key = `r59-rel-${randomUUID().slice(0, 8)}`;
      const msg = (id: string, type: string) => ({ id: `${key}-${id}`, type, payload: { key, tag: `${key}-${id}` } });
      const pm = t.engine.processes;
      const id = (await pm.deliver(fulfil, msg('paid', 'Paid'))).instanceId!;
      await expect(pm.deliver(fulfil, msg('g1', 'Glitch'))).rejects.toThrow(/r59 glitch/);
      t.clock.advance(10_000);
      expect((await pm.deliver(fulfil, msg('g2', 'Glitch'))).outcome).toBe('quarantined');
      // Sometimes a kept message is already waiting, so the release has work before the raced one.
      if (round % 2 === 1)
        expect((await pm.deliver(fulfil, msg('late', 'Booked'))).outcome).toBe('skipped_quarantined');
      const version = (await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } })).version;
      const cmd = {
        kind: 'instance.release',
        mode: 'skip',
        target: { instanceId: id },
        expected: { state: 'Reserving', version },
        actor: 'r59@example.test',
        reason: 'review 59 race',
        idempotencyKey: `r59-${randomUUID()}`,
      } as RepairCommand;
      const [delivered, released] = await race(
        round,
        id,
        () => b.engine.processes.deliver(fulfil, msg('reserved', 'Reserved')).then((r) => r.outcome),
        () =>
          t.engine.repairs.apply(cmd).then(
            () => 'applied',
            (e: unknown) => (e as { code?: string }).code ?? String(e),
          ),
      );
      // A redelivery of the raced message afterwards is a duplicate.
      const again = (await b.engine.processes.deliver(fulfil, msg('reserved', 'Reserved'))).outcome;
      const rows = await rowsOf(t.db, id);
      seen.push(`${delivered}/${released}`);
      expect(
        {
          released,
          again,
          state: rows.inst!.current_state,
          status: rows.inst!.status,
          appliedReserved: rows.history.filter((h) => h.outcome === 'applied' && h.message_type === 'Reserved').length,
          sends: rows.outbox.map((o) => o.type),
          timers: rows.timeouts.length,
        },
        `round ${round}: ${delivered}/${released}`,
      ).toEqual({
        released: 'applied',
        again: 'duplicate',
        state: 'Booking',
        status: 'ACTIVE',
        appliedReserved: 1,
        sends: ['ReserveInventory', 'BookShipment'],
        timers: 1,
      });
    }
    // Both orders were exercised: the message kept by the quarantine, and the message after the release.
    expect(new Set(seen)).toEqual(new Set(['skipped_quarantined/applied', 'applied/applied']));
  }, 60_000);

  it('two operators releasing one instance at once: one release applies the kept message once, the other is a conflict', async () => {
    for (let round = 0; round < 6; round++) {
      const key = `r59-two-${randomUUID().slice(0, 8)}`;
      const msg = (id: string, type: string) => ({ id: `${key}-${id}`, type, payload: { key, tag: `${key}-${id}` } });
      const pm = t.engine.processes;
      const id = (await pm.deliver(fulfil, msg('paid', 'Paid'))).instanceId!;
      await expect(pm.deliver(fulfil, msg('g1', 'Glitch'))).rejects.toThrow(/r59 glitch/);
      t.clock.advance(10_000);
      expect((await pm.deliver(fulfil, msg('g2', 'Glitch'))).outcome).toBe('quarantined');
      expect((await pm.deliver(fulfil, msg('reserved', 'Reserved'))).outcome).toBe('skipped_quarantined');
      const version = (await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } })).version;
      const release = (engine: TestEngine, actor: string) =>
        engine.engine.repairs
          .apply({
            kind: 'instance.release',
            mode: 'skip',
            target: { instanceId: id },
            expected: { state: 'Reserving', version },
            actor,
            reason: 'review 59: two operators',
            idempotencyKey: `r59-${randomUUID()}`,
          })
          .then(
            () => 'applied',
            (e: unknown) => (e as { code?: string }).code ?? String(e),
          );
      const outcomes = await Promise.all([release(t, 'alice@example.test'), release(b, 'bob@example.test')]);
      const rows = await rowsOf(t.db, id);
      expect(
        {
          outcomes: [...outcomes].sort(),
          state: rows.inst!.current_state,
          status: rows.inst!.status,
          appliedReserved: rows.history.filter((h) => h.outcome === 'applied' && h.message_type === 'Reserved').length,
          releaseRows: rows.history.filter((h) => h.outcome === 'repair').length,
          sends: rows.outbox.map((o) => o.type),
          audit: rows.repairs.map((r) => r.status).sort(),
        },
        `round ${round}`,
      ).toEqual({
        outcomes: ['applied', 'repair_conflict'],
        state: 'Booking',
        status: 'ACTIVE',
        appliedReserved: 1,
        releaseRows: 1,
        sends: ['ReserveInventory', 'BookShipment'],
        audit: ['applied', 'conflict'],
      });
    }
  }, 60_000);
});
