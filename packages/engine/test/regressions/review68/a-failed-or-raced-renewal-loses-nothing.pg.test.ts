import { twoRelays } from './support/two-relays.ts';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { publishOutboxBatch } from '../../../src/outbox/publish-outbox-batch.ts';
import { claimOutboxBatch } from '../../../src/store/claim-outbox-batch.ts';
import { renewOutboxClaim } from '../../../src/store/renew-outbox-claim.ts';
import { seedOutbox } from '../../outbox/seed-outbox.ts';
import { capturingLogger } from '../../support/capturing-logger.ts';
import { holdRows, waitForWaiters, type HeldRows } from '../../support/held-rows.ts';
import { waitFor } from '../../support/wait-for.ts';
import { rivalRelay, routeTo, rowOf } from './support/relay.ts';

/**
 * Review 68, HELD (real PostgreSQL):
 * - a renewal that waits behind a Published mark in flight (the mark holds the row) finds the row
 *   Published once the mark commits, keeps nothing and writes nothing: it does not revive a delivered row;
 * - a relay whose renewal's connection is ended (pg_terminate_backend) while the renewal waits goes on
 *   under the window it had: it sends nothing after that window, its pool replaces the connection, and
 *   every row goes out once (ADR 0139 §3).
 */
describe('review 68: a renewal raced by a mark, and a renewal whose connection is ended (real PostgreSQL)', () => {
  const t = twoRelays({ a: 2, b: 2 });

  it('a renewal that waited behind the row’s Published mark keeps nothing and leaves the row Published', async () => {
    const { admin } = t;
    const [m] = await seedOutbox(admin, [{ sourceId: 'r68-mark-race', destination: 'sink' }]);
    const now = new Date();
    const [claimed] = await claimOutboxBatch(admin.prisma, {
      now,
      limit: 10,
      visibilityTimeoutSeconds: 30,
      timeoutMs: 10_000,
    });
    if (claimed === undefined) throw new Error('claimed nothing');
    // The mark, in flight: the row is Published in a transaction that has not committed yet.
    const marker = new pg.Client({ connectionString: admin.url! });
    await marker.connect();
    try {
      const pid = (await marker.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      await marker.query('begin');
      await marker.query(
        `update sagaflow.outbox set status = 'Published', published_at = now() where id = $1 and status = 'Pending'`,
        [claimed.id],
      );
      const renewing = renewOutboxClaim(admin.prisma, {
        rows: [claimed],
        now: new Date(now.getTime() + 1_000),
        visibilityTimeoutSeconds: 30,
        lockWaitMs: 10_000,
        timeoutMs: 10_000,
      });
      await waitForWaiters(admin, pid);
      await marker.query('commit');
      const renewed = await renewing;
      const row = await rowOf(admin, m!);
      expect({ renewed: renewed.size, status: row.status, available_at: row.available_at }).toEqual({
        renewed: 0,
        status: 'Published',
        available_at: claimed.claimed_until,
      });
    } finally {
      await marker.end();
    }
  });

  it('a renewal whose connection is ended: the relay sends nothing past its window and every row goes out once', async () => {
    const { admin, relayA, relayB, sink } = t;
    const config = {
      visibility_timeout_seconds: 4,
      publish_timeout_ms: 3_000,
      transaction_timeout_ms: 10_000,
      batch_size: 10,
      max_attempts: 10,
      backoff: { base_delay_ms: 20, max_delay_ms: 50 },
    };
    const ids = await seedOutbox(admin, [
      { sourceId: 'r68-killed', destination: 'sink' },
      { sourceId: 'r68-killed', destination: 'sink' },
      { sourceId: 'r68-killed', destination: 'sink' },
    ]);
    const [s1, , s3] = ids;
    const s3Id = (await rowOf(admin, s3!)).id;
    let windowEnds = 0;
    let holder: HeldRows | undefined;
    sink.setAnswer(async (d) => {
      if (d.by === 'a' && d.messageId === s1) {
        windowEnds = (await rowOf(admin, s1)).available_at.getTime();
        // Another session holds s3 so that A's renewal before s2 waits (and can be found and ended).
        holder = await holdRows(admin.url!, 'outbox', [s3Id]);
        await waitFor('less than half of the window left', async () =>
          Date.now() > windowEnds - 2_100 ? true : undefined,
        );
      }
      return 200;
    });
    const { logger, lines } = capturingLogger();
    const passA = publishOutboxBatch({ db: relayA, routes: routeTo(sink.url('a')), config, logger });
    // Relay B starts once A has claimed the source and sent s1: started with A, it could claim the rows first.
    await waitFor('relay A to send s1', async () => (holder ? true : undefined));
    const b = rivalRelay(relayB, sink.url('b'), config);
    try {
      const [renewal] = await waitForWaiters(admin, holder!.pid);
      const ended = await admin.prisma.$queryRaw<
        { ok: boolean }[]
      >`select pg_terminate_backend(${renewal!.pid}::int) as ok`;
      await holder!.commit();
      const resultA = await passA;
      await waitFor('a pass of B after the first window', async () =>
        b.passedAfter(windowEnds + 500) ? true : undefined,
      );
      const rows = await Promise.all(ids.map((id) => rowOf(admin, id)));
      const seen = {
        ended: ended[0]?.ok,
        renewalWaiting: renewal!.query.includes('unnest'),
        renewFailed: lines.filter((l) => String(l.msg).startsWith('could not renew')).length,
        senders: ids.map((id) => sink.senders(id)),
        statuses: rows.map((r) => r.status),
        aSentAfterItsWindow: sink.deliveries.filter((d) => d.by === 'a' && d.at > windowEnds).length,
        resultA,
      };
      expect(seen, JSON.stringify(seen)).toMatchObject({
        ended: true,
        renewalWaiting: true,
        renewFailed: 1,
        senders: [['a'], ['a'], ['a']],
        statuses: ['Published', 'Published', 'Published'],
        aSentAfterItsWindow: 0,
        resultA: { published: 3 },
      });
    } finally {
      await holder?.rollback().catch(() => undefined);
      await b.stop();
      await passA.catch(() => undefined);
    }
  });
});
