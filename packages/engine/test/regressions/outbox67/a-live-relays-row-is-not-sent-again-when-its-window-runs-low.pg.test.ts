import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import type { OutboxEnvelope } from '../../../src/outbox/outbox-envelope.ts';
import { publishOutboxBatch } from '../../../src/outbox/publish-outbox-batch.ts';
import type { OutboxTransport } from '../../../src/outbox/outbox-transport.ts';
import { seedOutbox, outboxRow } from '../../outbox/seed-outbox.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { starvePool } from '../review53/support/liveness.ts';

/**
 * Outbox 67 (ADR 0139): a relay that is alive and still sending a row keeps it. Review 48's relays at
 * scale saw, on a loaded machine, a row delivered by relay A, given up by A as "not acknowledged within
 * 1743 ms" (its claim had taken 2.2 s of a 5 s window to come back, and a publish never ran past the
 * window), and sent again 1.2 s later by relay B: a duplicate from a relay that never died. Here the
 * window runs low by the relay's own progress (a claim that waited for a starved pool; a slow first row),
 * and the consumer acknowledges the next row within `publish_timeout_ms` but after the window the claim
 * first wrote. The faults are driven by that window as the database holds it: the tests wait for
 * `available_at` (or the claim's own `now`) to be passed, never for a fixed time.
 */
const vtSeconds = 3;
const config = {
  visibility_timeout_seconds: vtSeconds,
  publish_timeout_ms: 2_800,
  transaction_timeout_ms: 10_000,
  max_attempts: 10,
  backoff: { base_delay_ms: 20, max_delay_ms: 50 },
};
const logger = pino({ level: 'silent' });

interface Sent {
  messageId: string;
  by: 'A' | 'B';
}

describe('outbox 67: a row a live relay is still sending is not sent again by another (real PostgreSQL)', () => {
  let admin: Database & { url?: string };
  let relayA: Database;
  let relayB: Database;
  beforeAll(async () => {
    admin = await openTestDatabase({ poolSize: 2 });
    relayA = await createDatabase({ kind: 'postgres', url: admin.url!, poolSize: 1 });
    relayB = await createDatabase({ kind: 'postgres', url: admin.url!, poolSize: 2 });
  });
  afterAll(async () => {
    await relayA?.close();
    await relayB?.close();
    await admin?.close();
  });

  /** Relay B's transport acknowledges at once; relay A's asks `hold` when to acknowledge. */
  function transports(sent: Sent[], hold: (m: OutboxEnvelope) => Promise<void>) {
    const a: OutboxTransport = {
      kind: 'test-a',
      publish: async (m) => {
        sent.push({ messageId: m.messageId, by: 'A' });
        await hold(m);
      },
    };
    const b: OutboxTransport = {
      kind: 'test-b',
      publish: async (m) => {
        sent.push({ messageId: m.messageId, by: 'B' });
        await Promise.resolve();
      },
    };
    return { a, b };
  }

  /**
   * Relay B passes, one after another, from A's first send (so A claimed the rows) while A's pass is out,
   * then until the source has nothing Pending.
   */
  async function rivalWhile(passA: Promise<unknown>, sent: Sent[], b: OutboxTransport, sourceId: string) {
    let aDone = false;
    void passA.finally(() => (aDone = true));
    await waitFor('relay A to send its first row', async () => (sent.length > 0 || aDone ? true : undefined));
    while (!aDone) {
      await publishOutboxBatch({ db: relayB, routes: { sink: b }, config, logger, publisherId: 'relay-b' });
      await new Promise((r) => setTimeout(r, 10));
    }
    await waitFor(`source ${sourceId} published`, async () => {
      await publishOutboxBatch({ db: relayB, routes: { sink: b }, config, logger, publisherId: 'relay-b' });
      const pending = await admin.prisma.outboxMessage.count({ where: { source_id: sourceId, status: 'Pending' } });
      return pending === 0 ? true : undefined;
    });
  }

  it('a claim that came back with less than half its window left: the row acknowledged within publish_timeout_ms goes out once', async () => {
    const [messageId] = await seedOutbox(admin, [{ sourceId: 'o67-starved', destination: 'sink' }]);
    if (messageId === undefined) throw new Error('seeded nothing');
    const sent: Sent[] = [];
    let claimNow: Date | undefined;
    const clock = {
      now: () => {
        const now = new Date();
        claimNow ??= now;
        return now;
      },
    };
    // The consumer acknowledges A's copy once the window A's claim first wrote has passed.
    const { a, b } = transports(sent, async () => {
      await waitFor('the first claim window to pass', async () =>
        Date.now() > claimNow!.getTime() + vtSeconds * 1000 + 50 ? true : undefined,
      );
    });

    // Relay A's only connection is taken while it starts its pass: its claim waits for it.
    const starved = await starvePool(relayA, 1);
    const passA = publishOutboxBatch({
      db: relayA,
      routes: { sink: a },
      config,
      logger,
      clock,
      publisherId: 'relay-a',
    });
    await waitFor('relay A waiting for a connection', async () => (relayA.pool!.waitingCount > 0 ? true : undefined));
    // Let it go once more than half of the window its claim will write has gone.
    await waitFor('more than half the claim window spent waiting', async () =>
      Date.now() > claimNow!.getTime() + vtSeconds * 600 ? true : undefined,
    );
    starved.release();
    await rivalWhile(passA, sent, b, 'o67-starved');
    const resultA = await passA;

    const row = await outboxRow(admin, messageId);
    expect(row.status).toBe('Published');
    expect(
      { sent, lastError: row.last_error, resultA },
      'relay A was alive and its consumer acknowledged within publish_timeout_ms, yet the row went out again',
    ).toMatchObject({ sent: [{ messageId, by: 'A' }], lastError: null });
  });

  it('a batch whose first row took half the window: the next row, acknowledged within publish_timeout_ms, goes out once', async () => {
    const [first, second] = await seedOutbox(admin, [
      { sourceId: 'o67-slow', destination: 'sink' },
      { sourceId: 'o67-slow', destination: 'sink' },
    ]);
    if (first === undefined || second === undefined) throw new Error('seeded nothing');
    const sent: Sent[] = [];
    let firstWindowEnds = 0;
    const { a, b } = transports(sent, async (m) => {
      if (m.messageId === first) {
        // The first row is acknowledged once less than half of the claim's window is left.
        const claimed = await outboxRow(admin, first);
        firstWindowEnds = claimed.available_at.getTime();
        await waitFor('half the claim window spent on the first row', async () =>
          Date.now() > firstWindowEnds - (vtSeconds * 1000) / 2 + 100 ? true : undefined,
        );
        return;
      }
      // The second is acknowledged once the window the claim first wrote has passed.
      await waitFor('the first claim window to pass', async () =>
        Date.now() > firstWindowEnds + 50 ? true : undefined,
      );
    });

    const passA = publishOutboxBatch({ db: relayA, routes: { sink: a }, config, logger, publisherId: 'relay-a' });
    await rivalWhile(passA, sent, b, 'o67-slow');
    const resultA = await passA;

    const rows = await Promise.all([outboxRow(admin, first), outboxRow(admin, second)]);
    expect(rows.map((r) => r.status)).toEqual(['Published', 'Published']);
    expect(
      { sent, lastErrors: rows.map((r) => r.last_error), resultA },
      'relay A was alive and its consumer acknowledged within publish_timeout_ms, yet a row went out again',
    ).toMatchObject({
      sent: [
        { messageId: first, by: 'A' },
        { messageId: second, by: 'A' },
      ],
      lastErrors: [null, null],
    });
  });
});
