import { twoRelays } from './support/two-relays.ts';
import { describe, expect, it } from 'vitest';
import { publishOutboxBatch } from '../../../src/outbox/publish-outbox-batch.ts';
import { seedOutbox } from '../../outbox/seed-outbox.ts';
import { waitFor } from '../../support/wait-for.ts';
import { starvePool } from '../review53/support/liveness.ts';
import { rivalRelay, routeTo, rowOf, silent } from './support/relay.ts';

/**
 * Review 68, ADR 0139 §1 and its Consequences ("a relay that stalls for longer than a whole window between
 * a delivery and its mark still loses those rows"). The rows a source delivered were renewed when the source
 * ended only if less than `min(publish_timeout_ms, window / 2)` was left. With a publish deadline short next
 * to the window (here 0.8 s of 6 s), a source that ended with 1.5 s of its window left was not renewed, and
 * its rows waited for their Published mark with those 1.5 s: a mark held up for a quarter of the window (the
 * relay's pool busy, as a slow database makes it) lost every row of the source to a rival, which sent them
 * all again while relay A was alive and about to mark them. The window is now renewed at half, before each
 * row and before the mark, so a stall of a quarter of it loses nothing.
 */
const vtSeconds = 6;
const config = {
  visibility_timeout_seconds: vtSeconds,
  publish_timeout_ms: 800, // the base renewed below min(800, 3000) = 800 ms of window
  transaction_timeout_ms: 10_000,
  batch_size: 20,
  max_attempts: 10,
  backoff: { base_delay_ms: 20, max_delay_ms: 50 },
};
const rows = 14;

describe('review 68: rows delivered and waiting for their mark (real PostgreSQL)', () => {
  const t = twoRelays({ a: 1, b: 2 });

  it('a mark held up for a quarter of the window: the rows relay A delivered are not sent again by relay B', async () => {
    const { admin, relayA, relayB, sink } = t;
    const ids = await seedOutbox(
      admin,
      Array.from({ length: rows }, () => ({ sourceId: 'r68-mark', destination: 'sink' })),
    );
    const last = ids[ids.length - 1]!;
    let windowEnds = 0;
    let starved: { release(): void } | undefined;
    let starvedAt = 0;
    sink.setAnswer(async (d) => {
      if (d.by !== 'a') return 200;
      // Each row is acknowledged within 500 ms (publish_timeout_ms is 800), until 1.5 s of the window
      // A's claim wrote is left; the rows after that at once. No renewal is due before then.
      windowEnds = (await rowOf(admin, d.messageId)).available_at.getTime();
      const target = Math.min(d.at + 500, windowEnds - 1_500);
      await waitFor('the row to be answered', async () => (Date.now() >= target ? true : undefined));
      if (d.messageId === last) {
        // Relay A's pool is busy (a slow database, the host's own work on the shared handle) from now on.
        starved = await starvePool(relayA, 1);
        starvedAt = Date.now();
      }
      return 200;
    });

    const passA = publishOutboxBatch({ db: relayA, routes: routeTo(sink.url('a')), config, logger: silent });
    await waitFor('relay A to send its first row', async () => (sink.deliveries.length > 0 ? true : undefined));
    const b = rivalRelay(relayB, sink.url('b'), config);
    try {
      await waitFor(
        "relay A's last row to be acknowledged with its pool busy",
        async () => (starved ? true : undefined),
        20_000,
      );
      // The pool is given back once relay B sent a row of the source, or once a pass of B that began a
      // quarter of the window after the stall began has ended.
      await waitFor(
        'relay B to send a row, or to pass a quarter of the window into the stall',
        async () =>
          sink.deliveries.some((d) => d.by === 'b') || b.passedAfter(starvedAt + (vtSeconds * 1000) / 4)
            ? true
            : undefined,
        30_000,
      );
      const stalledMs = Date.now() - starvedAt;
      const leftAtStall = windowEnds - starvedAt;
      starved!.release();
      const resultA = await passA;
      await waitFor('every row Published', async () => {
        const n = await admin.prisma.outboxMessage.count({ where: { source_id: 'r68-mark', status: 'Pending' } });
        return n === 0 ? true : undefined;
      });

      const sentAgain = ids.filter((id) => sink.senders(id).includes('b'));
      const seen = {
        sentByA: ids.filter((id) => sink.senders(id).includes('a')).length,
        sentAgainByB: sentAgain.length,
        windowMs: vtSeconds * 1000,
        windowLeftWhenMarkWasHeldUpMs: leftAtStall,
        markHeldUpMs: stalledMs,
        resultA,
      };
      expect(
        seen,
        `relay A delivered every row and was alive, its mark held up for ${stalledMs} ms of a ${vtSeconds * 1000} ms ` +
          `window, yet relay B sent rows again: ${JSON.stringify(seen)}`,
      ).toMatchObject({ sentByA: rows, sentAgainByB: 0 });
    } finally {
      starved?.release();
      await b.stop();
      await passA.catch(() => undefined);
    }
  });
});
