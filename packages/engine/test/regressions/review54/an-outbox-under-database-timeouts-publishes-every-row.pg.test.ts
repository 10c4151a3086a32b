import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { inProcessTransport } from '../../../src/outbox/in-process-transport.ts';
import type { OutboxEnvelope } from '../../../src/outbox/outbox-envelope.ts';
import { startOutboxPublisher, type OutboxPublisher } from '../../../src/outbox/start-outbox-publisher.ts';
import { seedOutbox } from '../../outbox/seed-outbox.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate, keptLogger } from '../review53/support/liveness.ts';

/**
 * Review 54: the same trouble as one-locked-outbox-row-holds-back-only-its-source, with
 * `lock_timeout` / `statement_timeout` set on the database (as an operator or a managed PostgreSQL
 * does). The relay's mark of the locked row is cancelled; the other source's rows are Published
 * while the lock is still held, and once it is gone the held row is Published too (at least once,
 * nothing Pending left).
 */
const config = {
  poll_interval_ms: 50,
  visibility_timeout_seconds: 2,
  publish_timeout_ms: 1_000,
  max_attempts: 20,
  backoff: { base_delay_ms: 50, max_delay_ms: 200 },
};
const WINDOW_MS = config.visibility_timeout_seconds * 1000;

describe.each(['lock_timeout', 'statement_timeout'])(
  'review 54: an outbox row locked while the relay marks it, with %s set on the database (real PostgreSQL)',
  (setting) => {
    let admin: Database & { url?: string };
    let db: Database;
    let dbName = '';
    let publisher: OutboxPublisher | undefined;
    let holder: pg.PoolClient | undefined;
    beforeAll(async () => {
      admin = await openTestDatabase({ poolSize: 2 });
      dbName = (await admin.pool!.query<{ d: string }>('select current_database() as d')).rows[0]!.d;
      await admin.pool!.query(`alter database "${dbName}" set ${setting} = '300ms'`);
      db = await createDatabase({ kind: 'postgres', url: admin.url!, poolSize: 4 });
    });
    afterAll(async () => {
      await holder?.query('rollback').catch(() => undefined);
      holder?.release();
      await publisher?.stop().catch(() => undefined);
      await db?.close();
      await admin?.pool?.query(`alter database "${dbName}" reset ${setting}`).catch(() => undefined);
      await admin?.close();
    });

    it(`with ${setting}, every row is Published: the others while the lock is held, the held one after`, async () => {
      const delivered = new Map<string, number>();
      const heldDelivered = gate();
      const locked = gate();
      const kept = keptLogger();
      const [seeded] = await seedOutbox(admin, [{ sourceId: 'r54-held', destination: 'inventory' }]);
      if (seeded === undefined) throw new Error('one outbox row was seeded');
      const heldId = seeded;
      publisher = startOutboxPublisher({
        db,
        routes: {
          inventory: inProcessTransport(async (m: OutboxEnvelope) => {
            delivered.set(m.messageId, (delivered.get(m.messageId) ?? 0) + 1);
            if (m.messageId === heldId && delivered.get(heldId) === 1) {
              heldDelivered.open();
              await locked.opened;
            }
          }),
        },
        config,
        logger: pino({ level: 'warn' }, kept.stream),
      });
      await heldDelivered.opened;
      holder = await admin.pool!.connect();
      await holder.query('begin');
      await holder.query(`set local ${setting} = 0`);
      await holder.query(`select id from "sagaflow"."outbox" where message_id = $1 for update`, [heldId]);
      locked.open();
      // Its mark is cancelled by the database's timeout, or (since review 54's fix) skips the held row.
      await waitFor('the relay’s mark of the held row to give it up', async () =>
        kept.count(/could not be marked Published|another session holds it/) > 0 ? true : undefined,
      );
      const others = await seedOutbox(
        admin,
        [0, 1, 2].map((n) => ({ sourceId: 'r54-other', destination: 'inventory', payload: { n } })),
      );
      await waitFor(
        'the other source Published while the lock is held',
        async () => {
          const rows = await admin.prisma.outboxMessage.findMany({ where: { message_id: { in: others } } });
          return rows.every((r) => r.status === 'Published') ? true : undefined;
        },
        3 * WINDOW_MS + 4_000,
      );
      const heldWhileLocked = await admin.prisma.outboxMessage.findUniqueOrThrow({ where: { message_id: heldId } });
      expect(heldWhileLocked.status).toBe('Pending');
      await holder.query('rollback');
      holder.release();
      holder = undefined;
      await waitFor(
        'the held row Published once the lock is gone',
        async () =>
          (await admin.prisma.outboxMessage.findUniqueOrThrow({ where: { message_id: heldId } })).status === 'Published'
            ? true
            : undefined,
        3 * WINDOW_MS + 6_000,
      );
      expect(await admin.prisma.outboxMessage.count({ where: { status: { not: 'Published' } } })).toBe(0);
      // At least once: the held row went out again after its mark was cancelled.
      expect(delivered.get(heldId)).toBeGreaterThanOrEqual(2);
    });
  },
);
