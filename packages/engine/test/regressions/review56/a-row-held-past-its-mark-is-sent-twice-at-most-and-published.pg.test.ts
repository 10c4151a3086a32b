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
 * Review 56, review 55's leftover (ADR 0131 §2). The Published mark waits 1 s for a row another
 * session holds, then skips it: "a skipped row stays Pending and is sent again after its claim window".
 * Held for several claim windows (an operator's open transaction), is the row sent again and again
 * while held (each window a new claim, a new delivery, a skipped mark), or left Pending for ever once
 * let go? Expected: while held it is not claimed again (the claim skips locked rows), so it is
 * delivered at most twice in all (the first delivery, and once after the hold), and it ends Published.
 */
const config = {
  poll_interval_ms: 50,
  visibility_timeout_seconds: 2,
  publish_timeout_ms: 1_000,
  max_attempts: 20,
  backoff: { base_delay_ms: 50, max_delay_ms: 200 },
};
const WINDOW_MS = config.visibility_timeout_seconds * 1000;

describe('review 56: an outbox row held for several claim windows after its delivery (real PostgreSQL)', () => {
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

  it('is delivered at most twice and ends Published', async () => {
    const delivered = new Map<string, number>();
    const kept = keptLogger();
    const heldDelivered = gate();
    const locked = gate();
    const [heldId] = await seedOutbox(db, [{ sourceId: 'r56-held', destination: 'inventory' }]);
    const handler = async (m: OutboxEnvelope) => {
      delivered.set(m.messageId, (delivered.get(m.messageId) ?? 0) + 1);
      if (m.messageId === heldId && delivered.get(heldId) === 1) {
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
    holder = await db.pool!.connect();
    await holder.query('begin');
    await holder.query(`select id from "sagaflow"."outbox" where message_id = $1 for update`, [heldId]);
    locked.open();
    await waitFor('the mark to skip the held row', async () =>
      kept.count(/another session holds it/) > 0 ? true : undefined,
    );
    // Held for three more claim windows, while the relay keeps polling every 50 ms.
    const heldUntil = Date.now() + 3 * WINDOW_MS;
    while (Date.now() < heldUntil) await new Promise((r) => setTimeout(r, 100));
    const whileHeld = delivered.get(heldId!) ?? 0;
    await holder.query('rollback');
    holder.release();
    holder = undefined;
    await waitFor(
      'the row Published once let go',
      async () => {
        const r = await db.prisma.outboxMessage.findFirst({ where: { message_id: heldId } });
        return r?.status === 'Published' ? r : undefined;
      },
      4 * WINDOW_MS + 6_000,
    ).catch(() => undefined);
    const row = await db.prisma.outboxMessage.findFirst({ where: { message_id: heldId } });
    await publisher.stop();
    publisher = undefined;
    expect({ whileHeld, total: delivered.get(heldId!), status: row?.status }).toEqual({
      whileHeld: 1,
      total: 2,
      status: 'Published',
    });
  }, 60_000);
});
