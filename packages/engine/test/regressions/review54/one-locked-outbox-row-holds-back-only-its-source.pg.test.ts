import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { inProcessTransport } from '../../../src/outbox/in-process-transport.ts';
import type { OutboxEnvelope } from '../../../src/outbox/outbox-envelope.ts';
import { startOutboxPublisher, type OutboxPublisher } from '../../../src/outbox/start-outbox-publisher.ts';
import { seedOutbox } from '../../outbox/seed-outbox.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate, keptLogger } from '../review53/support/liveness.ts';

/**
 * Review 54: ADR 0103 "a slow source holds back only itself". The trouble here is on the database
 * side: one source's row is held FOR UPDATE by another session (an operator's open transaction, a
 * repair that stalls) just as the relay has delivered it, so the relay's Published mark of that row
 * waits on the lock. Another source's rows, written afterwards, must still be delivered and marked
 * Published within a few claim windows; and once the lock is gone, the held row is Published too.
 */
const config = {
  poll_interval_ms: 50,
  visibility_timeout_seconds: 2,
  publish_timeout_ms: 1_000,
  max_attempts: 20,
  backoff: { base_delay_ms: 50, max_delay_ms: 200 },
};
const WINDOW_MS = config.visibility_timeout_seconds * 1000;

/**
 * Progress: the relay has tried to mark the held row while the lock is held. Before review 54's fix its
 * mark waited on the lock (seen in pg_stat_activity); since, it skips the held row and says so.
 */
async function markMetTheLock(db: Database, kept: ReturnType<typeof keptLogger>) {
  if (kept.count(/another session holds it/) > 0) return true;
  const r = await db.pool!.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and query ilike '%update "sagaflow"."outbox"%'`,
  );
  return r.rows[0]!.n > 0 ? true : undefined;
}

describe('review 54: an outbox row locked by another session while the relay marks it (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let publisher: OutboxPublisher | undefined;
  let holder: pg.PoolClient | undefined;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 6 });
  });
  afterAll(async () => {
    await holder?.query('rollback').catch(() => undefined);
    holder?.release();
    await publisher?.stop().catch(() => undefined);
    await db?.close();
  });

  it('a row whose Published mark waits on another session’s lock holds back only its own source', async () => {
    const delivered = new Map<string, number>();
    const kept = keptLogger();
    const heldDelivered = gate();
    const locked = gate();
    const [heldId] = await seedOutbox(db, [{ sourceId: 'r54-held', destination: 'inventory' }]);
    const handler = async (m: OutboxEnvelope) => {
      delivered.set(m.messageId, (delivered.get(m.messageId) ?? 0) + 1);
      if (m.messageId === heldId) {
        heldDelivered.open();
        await locked.opened;
      }
    };
    publisher = startOutboxPublisher({
      db,
      routes: { inventory: inProcessTransport(handler) },
      config,
      logger: pino({ level: 'warn' }, kept.stream),
    });
    await heldDelivered.opened;
    // The trouble: another session locks the row the relay has just delivered, before it is marked.
    holder = await db.pool!.connect();
    await holder.query('begin');
    await holder.query(`select id from "sagaflow"."outbox" where message_id = $1 for update`, [heldId]);
    locked.open();
    await waitFor('the relay’s mark of the held row to meet the lock', () => markMetTheLock(db, kept));

    // Another source's commands are written now: they have nothing to do with the held row.
    const others = await seedOutbox(
      db,
      [0, 1, 2].map((n) => ({ sourceId: 'r54-other', destination: 'inventory', payload: { n } })),
    );
    const status = async () =>
      (await db.prisma.outboxMessage.findMany({ where: { message_id: { in: others } } })).map((r) => ({
        messageId: r.message_id,
        status: r.status,
        attempts: r.attempts,
      }));
    // They are delivered (progress), then given three claim windows and slack to be marked.
    await waitFor('the other source’s rows to be delivered', async () =>
      others.every((id) => (delivered.get(id) ?? 0) > 0) ? true : undefined,
    );
    const deadline = Date.now() + 3 * WINDOW_MS + 4_000;
    let seen = await status();
    while (Date.now() < deadline && !seen.every((r) => r.status === 'Published')) {
      await new Promise((r) => setTimeout(r, 100));
      seen = await status();
    }
    const copies = others.map((id) => delivered.get(id) ?? 0);

    // The trouble ends.
    await holder.query('rollback');
    holder.release();
    holder = undefined;
    await waitFor(
      'every row Published once the lock is gone',
      async () => {
        const rows = await db.prisma.outboxMessage.findMany({ where: { status: { not: 'Published' } } });
        return rows.length === 0 ? true : undefined;
      },
      3 * WINDOW_MS + 6_000,
    );
    await publisher.stop();
    publisher = undefined;

    expect(
      { seen, copies },
      `the other source’s rows stayed unmarked (and were sent again) while one row of another source was locked: ${JSON.stringify({ seen, copies })}`,
    ).toMatchObject({ seen: others.map(() => ({ status: 'Published' })) });
  });

  it('a relay asked to stop while a row’s Published mark waits on a lock stops within its publish deadline', async () => {
    await db.prisma.$executeRaw`delete from "sagaflow"."outbox"`;
    const kept = keptLogger();
    const heldDelivered = gate();
    const locked = gate();
    const [heldId] = await seedOutbox(db, [{ sourceId: 'r54-stop-held', destination: 'inventory' }]);
    const relay = startOutboxPublisher({
      db,
      routes: {
        inventory: inProcessTransport(async (m) => {
          if (m.messageId === heldId) {
            heldDelivered.open();
            await locked.opened;
          }
        }),
      },
      config,
      logger: pino({ level: 'warn' }, kept.stream),
    });
    await heldDelivered.opened;
    const lockHolder = await db.pool!.connect();
    try {
      await lockHolder.query('begin');
      await lockHolder.query(`select id from "sagaflow"."outbox" where message_id = $1 for update`, [heldId]);
      locked.open();
      await waitFor('the relay’s mark to meet the lock', () => markMetTheLock(db, kept));
      // ADR 0103: stop() waits for what is still out, and each publish ends within publish_timeout_ms.
      const bound = config.publish_timeout_ms + WINDOW_MS + 3_000;
      const started = Date.now();
      const stopped = await Promise.race([
        relay.stop().then(() => 'stopped' as const),
        new Promise<'still running'>((r) => setTimeout(() => r('still running'), bound)),
      ]);
      expect({ stopped, afterMs: Date.now() - started }, `stop() had not returned after ${bound} ms`).toMatchObject({
        stopped: 'stopped',
      });
    } finally {
      await lockHolder.query('rollback').catch(() => undefined);
      lockHolder.release();
      await relay.stop().catch(() => undefined);
    }
  });
});
