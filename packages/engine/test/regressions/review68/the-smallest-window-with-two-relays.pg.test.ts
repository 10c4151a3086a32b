import { twoRelays } from './support/two-relays.ts';
import { describe, expect, it } from 'vitest';
import { startOutboxPublisher, type OutboxPublisher } from '../../../src/outbox/start-outbox-publisher.ts';
import { seedOutbox } from '../../outbox/seed-outbox.ts';
import { waitFor } from '../../support/wait-for.ts';
import { routeTo, silent } from './support/relay.ts';

/**
 * Review 68, HELD (real PostgreSQL): the smallest claim window config accepts (1 s) with a publish deadline
 * larger than it (5 s), two relays in a loop, and a healthy consumer that answers each message in 200 ms. A
 * source of 8 rows takes 1.6 s to send, longer than the window: only the renewal (ADR 0139) keeps it with
 * the relay that claimed it. Every row goes out exactly once, each source's rows in their order, by one
 * relay; none goes Dead.
 */
const config = {
  visibility_timeout_seconds: 1,
  publish_timeout_ms: 5_000,
  transaction_timeout_ms: 10_000,
  poll_interval_ms: 20,
  batch_size: 100,
  max_attempts: 10,
  backoff: { base_delay_ms: 20, max_delay_ms: 50 },
};
const sources = 4;
const perSource = 8;

describe('review 68: the smallest claim window, two relays (real PostgreSQL)', () => {
  const t = twoRelays({ a: 4, b: 4 });

  it('a 1 s window, sources that take 1.6 s each: every row once, in order, by one relay', async () => {
    const { admin, relayA, relayB, sink } = t;
    const bySource: string[][] = [];
    for (let s = 0; s < sources; s++)
      bySource.push(
        await seedOutbox(
          admin,
          Array.from({ length: perSource }, () => ({ sourceId: `r68-small-${s}`, destination: 'sink' })),
        ),
      );
    sink.setAnswer(
      (d) =>
        new Promise((resolve) => {
          setTimeout(() => resolve(200), Math.max(0, d.at + 200 - Date.now()));
        }),
    );
    const relays: OutboxPublisher[] = [
      startOutboxPublisher({ db: relayA, routes: routeTo(sink.url('a')), config, logger: silent }),
      startOutboxPublisher({ db: relayB, routes: routeTo(sink.url('b')), config, logger: silent }),
    ];
    try {
      await waitFor(
        'every row Published or Dead',
        async () => {
          const n = await admin.prisma.outboxMessage.count({ where: { status: 'Pending' } });
          return n === 0 ? true : undefined;
        },
        30_000,
      );
    } finally {
      await Promise.all(relays.map((r) => r.stop()));
    }
    const all = bySource.flat();
    const twice = all.filter((id) => sink.senders(id).length > 1).map((id) => sink.senders(id));
    const outOfOrder = bySource.filter((ids) => {
      const first = sink.deliveries.filter((d) => ids.includes(d.messageId)).map((d) => d.messageId);
      return [...new Set(first)].join() !== ids.join();
    }).length;
    const dead = await admin.prisma.outboxMessage.count({ where: { status: 'Dead' } });
    const seen = { rows: all.length, delivered: sink.deliveries.length, twice, outOfOrder, dead };
    expect(seen, JSON.stringify(seen)).toEqual({
      rows: all.length,
      delivered: all.length,
      twice: [],
      outOfOrder: 0,
      dead: 0,
    });
  });
});
