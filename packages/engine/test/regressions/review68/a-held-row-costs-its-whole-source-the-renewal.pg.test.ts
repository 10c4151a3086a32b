import { twoRelays } from './support/two-relays.ts';
import { describe, expect, it } from 'vitest';
import { publishOutboxBatch } from '../../../src/outbox/publish-outbox-batch.ts';
import { seedOutbox } from '../../outbox/seed-outbox.ts';
import { capturingLogger } from '../../support/capturing-logger.ts';
import { holdRows, type HeldRows } from '../../support/held-rows.ts';
import { waitFor } from '../../support/wait-for.ts';
import { rivalRelay, routeTo, rowOf } from './support/relay.ts';

/**
 * Review 68, ADR 0139 §1 and §3. A relay renews the claim of its source's rows in ONE statement that waits
 * at most a second for a row another session holds, and fails whole past it. So one row of the source held
 * by another session (a host's open transaction, psql: the case ADR 0131 and ADR 0139 §3 name) takes the
 * renewal away from every OTHER row of the source: the row already delivered (waiting for its mark) and
 * the row being sent. The relay then sends the next row with what is left of the old window (the short
 * deadline ADR 0139 was written to remove), and hands back the held row with a statement that has no lock
 * limit, so it waits for the holder while the rows it delivered lapse. The rival sends them again while
 * relay A is alive.
 *
 * Faults are driven by the claim window the database holds (`available_at`), never by a fixed sleep.
 */
const vtSeconds = 4;
const config = {
  visibility_timeout_seconds: vtSeconds,
  publish_timeout_ms: 3_000, // renewed below min(3000, 4000 / 2) = 2000 ms of window
  transaction_timeout_ms: 10_000,
  batch_size: 10,
  max_attempts: 10,
  backoff: { base_delay_ms: 20, max_delay_ms: 50 },
};

describe('review 68: one held row of a source and the renewal of the others (real PostgreSQL)', () => {
  const t = twoRelays({ a: 2, b: 2 });

  it('rows a live relay delivered, or was sending within publish_timeout_ms, are not sent again by the rival because a later row of the source is held', async () => {
    const { admin, relayA, relayB, sink } = t;
    const [s1, s2, s3] = await seedOutbox(admin, [
      { sourceId: 'r68-held', destination: 'sink' },
      { sourceId: 'r68-held', destination: 'sink' },
      { sourceId: 'r68-held', destination: 'sink' },
    ]);
    if (s1 === undefined || s2 === undefined || s3 === undefined) throw new Error('seeded nothing');
    const s3Id = (await rowOf(admin, s3)).id;

    let windowEnds = 0; // the claim window A's claim wrote (available_at), in Date.now() time
    let holder: HeldRows | undefined;
    sink.setAnswer(async (d) => {
      if (d.by !== 'a') return 200;
      if (d.messageId === s1) {
        // A's claim has committed: its window is in the row. Another session now holds s3, A's last row.
        windowEnds = (await rowOf(admin, s1)).available_at.getTime();
        holder = await holdRows(admin.url!, 'outbox', [s3Id]);
        // s1 is acknowledged once less than half the window is left (2100 ms): A renews before s2.
        await waitFor('less than half of the window left', async () =>
          Date.now() > windowEnds - 2_100 ? true : undefined,
        );
        return 200;
      }
      if (d.messageId === s2) {
        // A healthy consumer: it answers in 1.2 s, well within publish_timeout_ms (3 s).
        await waitFor('1.2 s', async () => (Date.now() > d.at + 1_200 ? true : undefined));
        return 200;
      }
      return 200;
    });

    const { logger, lines } = capturingLogger();
    const passA = publishOutboxBatch({
      db: relayA,
      routes: routeTo(sink.url('a')),
      config,
      logger,
      publisherId: 'relay-a',
    });
    let passAEnded = 0;
    void passA.finally(() => (passAEnded = Date.now()));
    await waitFor('relay A to send s1', async () => (sink.senders(s1).includes('a') ? true : undefined));
    const b = rivalRelay(relayB, sink.url('b'), config);
    try {
      // The holder lets go once relay B has sent s1, or once a pass of B that began a second after
      // A's first window lapsed has ended (B had every chance to take the rows).
      await waitFor(
        'relay B to send s1, or to pass after the window',
        async () =>
          windowEnds > 0 && (sink.senders(s1).includes('b') || b.passedAfter(windowEnds + 1_000)) ? true : undefined,
        30_000,
      );
      const heldUntil = Date.now();
      await holder!.commit();
      await waitFor('every row Published', async () => {
        const n = await admin.prisma.outboxMessage.count({ where: { source_id: 'r68-held', status: 'Pending' } });
        return n === 0 ? true : undefined;
      });
      const resultA = await passA;

      const renewFailed = lines.filter((l) => String(l.msg).startsWith('could not renew')).length;
      const cutShort = lines
        .filter((l) => String(l.msg).startsWith('outbox publish failed'))
        .map((l) => (l.err as { message?: string } | undefined)?.message);
      const seen = {
        s1: sink.senders(s1),
        s2: sink.senders(s2),
        renewFailed,
        cutShort,
        passAEndedMsAfterHolderLetGo: passAEnded - heldUntil,
        windowLapsedMsBeforeHolderLetGo: heldUntil - windowEnds,
        resultA,
      };
      expect(
        seen,
        'relay A was alive: it delivered s1 and its consumer acknowledged s2 within publish_timeout_ms, ' +
          `yet relay B sent them again because another session held s3: ${JSON.stringify(seen)}`,
      ).toMatchObject({ s1: ['a'], s2: ['a'] });
    } finally {
      await holder?.rollback().catch(() => undefined);
      await b.stop();
      await passA.catch(() => undefined);
    }
  });
});
