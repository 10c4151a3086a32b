import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { inProcessTransport, publishOutboxBatch } from '../../../src/index.ts';
import type { OutboxEnvelope } from '../../../src/outbox/outbox-envelope.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { seedOutbox } from '../../outbox/seed-outbox.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * Review 29. ADR 0009: a source's rows are published in the order they were written; "a row
 * waiting for its backoff, or in flight under another claim, holds back the rows behind it". The
 * claim picks a source's due rows from its front and then locks them with FOR UPDATE SKIP LOCKED:
 * a head row that is due but locked by another statement at that moment is skipped, and the rows
 * behind it are claimed and sent before it. Such a lock is an outcome write of a publisher whose
 * claim window lapsed while its transport hung (recordOutboxFailure or the Published mark of the
 * head row, in flight); here a transaction of the test holds that row lock, as that write would.
 */
describe('an outbox source whose due head row is locked by another statement (postgres)', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 6 });
  });
  afterAll(async () => {
    await db.close();
  });

  it('the rows behind the head are not sent before it', async () => {
    const source = `source-${randomUUID().slice(0, 8)}`;
    const ids = await seedOutbox(
      db,
      [1, 2, 3].map((n) => ({ sourceId: source, payload: { n } })),
    );
    const head = (await db.prisma.outboxMessage.findUniqueOrThrow({ where: { message_id: ids[0]! } })).id;

    let letGo: (() => void) | null = null;
    const holder = db.prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`select 1 from "sagaflow"."outbox" where id = ${head}::uuid for no key update`;
        await new Promise<void>((r) => (letGo = r));
      },
      { timeout: 60_000, maxWait: 60_000 },
    );
    await waitFor('the head row to be locked', async () => (letGo ? true : undefined));

    const sent: OutboxEnvelope[] = [];
    const routes = { inventory: inProcessTransport((m) => void sent.push(m)) };
    const clock = new TestClock(new Date(Date.now() + 60_000));
    const whileLocked = await publishOutboxBatch({ db, routes, clock });
    const written = (m: OutboxEnvelope) => (m.payload as { n: number }).n;
    const sentWhileLocked = sent.map(written);
    letGo!();
    await holder;
    await publishOutboxBatch({ db, routes, clock: new TestClock(new Date(Date.now() + 600_000)) });

    // In write order, whatever was sent while the head was locked.
    expect({ sentWhileLocked, order: sent.map(written) }).toEqual({ sentWhileLocked: [], order: [1, 2, 3] });
    expect(whileLocked.published).toBe(0);
  });
});
