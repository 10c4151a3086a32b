import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { natsJetStreamTransport } from '../../../src/outbox/nats-jetstream-transport.ts';
import { publishOutboxBatch } from '../../../src/outbox/publish-outbox-batch.ts';
import { readStream, useNatsOutbox } from '../../outbox/nats-outbox-suite.ts';
import { outboxRow, seedOutbox } from '../../outbox/seed-outbox.ts';

const logger = pino({ level: 'silent' });

/**
 * ADR 0009: a poison message blocks its own source until it is Dead (max_attempts), with its
 * last_error visible; a Dead row stops holding its source back; other sources are unaffected.
 */
describe('review 32: NATS rows that can never be published', () => {
  const s = useNatsOutbox({ max_msg_size: 64 * 1024 });
  const pass = () =>
    publishOutboxBatch({
      db: s.db,
      routes: { shipping: natsJetStreamTransport({ connection: s.nc, ackTimeoutMs: 3000 }) },
      clock: s.clock,
      logger,
      config: { batch_size: 10, max_attempts: 2, backoff: { base_delay_ms: 1000, max_delay_ms: 1000 } },
    });
  /** Passes until nothing is claimed, moving the s.clock past each backoff. */
  const drain = async () => {
    for (let i = 0; i < 6; i++) {
      await pass();
      s.clock.advance(1000);
    }
  };

  it.each([
    ['over the server’s max_payload (1 MB)', 2 * 1024 * 1024, /max.?payload/i],
    ['over the stream’s max_msg_size (64 KB)', 100 * 1024, /size|maximum/i],
  ])(
    'a row %s goes Dead with the reason in last_error, its source’s next row and another source go out',
    async (_what, size, reason) => {
      const [big, next] = await seedOutbox(s.db, [
        { sourceId: 'big', destination: 'shipping', payload: { blob: 'x'.repeat(size) } },
        { sourceId: 'big', destination: 'shipping' },
      ]);
      const [other] = await seedOutbox(s.db, [{ sourceId: 'other', destination: 'shipping' }]);

      await drain();

      const row = await outboxRow(s.db, big!);
      expect({ status: row.status, attempts: row.attempts }).toEqual({ status: 'Dead', attempts: 2 });
      expect(row.last_error).toMatch(reason);
      expect((await outboxRow(s.db, next!)).status).toBe('Published');
      expect(new Set((await readStream(s.jsm, 'SAGAFLOW')).map((m) => m.msgId))).toEqual(new Set([next, other]));
      expect(s.nc.isClosed()).toBe(false);
    },
  );

  it('a destination whose subject is not valid (a space) fails only its own row; the shared connection keeps publishing', async () => {
    const [bad] = await seedOutbox(s.db, [{ sourceId: 'bad', destination: 'ship ping' }]);
    const [good] = await seedOutbox(s.db, [{ sourceId: 'good', destination: 'shipping' }]);
    const transport = natsJetStreamTransport({ connection: s.nc, ackTimeoutMs: 3000 });
    await publishOutboxBatch({
      db: s.db,
      routes: { shipping: transport, 'ship ping': transport },
      clock: s.clock,
      logger,
      config: { batch_size: 10, max_attempts: 2 },
    });
    const [later] = await seedOutbox(s.db, [{ sourceId: 'later', destination: 'shipping' }]);
    await publishOutboxBatch({ db: s.db, routes: { shipping: transport }, clock: s.clock, logger });

    expect({
      bad: (await outboxRow(s.db, bad!)).status,
      good: (await outboxRow(s.db, good!)).status,
      later: (await outboxRow(s.db, later!)).status,
      closed: s.nc.isClosed(),
    }).toEqual({ bad: 'Pending', good: 'Published', later: 'Published', closed: false });
    expect((await outboxRow(s.db, bad!)).last_error).toMatch(/ship ping/);
  });

  it('a header value with a line break is a visible failure of its row, not a silent loss (held)', async () => {
    const messageId = randomUUID();
    await s.db.prisma.outboxMessage.create({
      data: {
        message_id: messageId,
        source_kind: 'process',
        source_id: 'hdr',
        type: 'Ship',
        destination: 'shipping',
        payload: {},
        headers: { 'x-trace': 'a\r\nNats-Msg-Id: forged' },
      },
    });
    await pass();
    const row = await outboxRow(s.db, messageId);
    const ids = (await readStream(s.jsm, 'SAGAFLOW')).map((m) => m.msgId);
    // Either refused (visible) or sent with the real message id, never under a forged one.
    if (row.status === 'Published') expect(ids).toEqual([messageId]);
    else expect(row.last_error).not.toBeNull();
    expect(ids).not.toContain('forged');
  });
});
