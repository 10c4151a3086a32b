import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { startOutboxPublisher, type OutboxPublisher } from '../../../src/outbox/start-outbox-publisher.ts';
import { clearOutbox, seedOutbox } from '../../outbox/seed-outbox.ts';
import { holdRows, waitForWaiters, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { routeTo, rowOf, silent } from './support/relay.ts';
import { startTaggedSink } from './support/tagged-sink.ts';

/**
 * Review 68. ADR 0131 §2: "a row held for long holds back only its own source, and a stop is not held by
 * it"; the Published mark and (ADR 0139 §3) the renewal wait at most a second for a row another session
 * holds. The hand-back of a source's untried rows (`releaseOutboxClaim`, after an earlier row failed, after
 * a renewal that did not keep a row, or after the window ran out) is sent with no such limit: when a row it
 * hands back is held by another session, the source waits for as long as the holder keeps it, and the
 * publisher's `stop()` waits with it.
 */
const config = {
  visibility_timeout_seconds: 4,
  publish_timeout_ms: 2_000,
  transaction_timeout_ms: 10_000,
  poll_interval_ms: 50,
  batch_size: 10,
  max_attempts: 10,
  backoff: { base_delay_ms: 20, max_delay_ms: 50 },
};

describe('review 68: a hand-back and a row another session holds (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let sink: Awaited<ReturnType<typeof startTaggedSink>>;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 3 });
    sink = await startTaggedSink();
  });
  afterAll(async () => {
    await sink?.close();
    await db?.close();
  });

  /**
   * One source s1, s2; after the claim another session holds row `held` and s1's consumer answers 500. Once a
   * backend of the relay waits on the holder, stop() is called; it should return within its bound.
   */
  async function stopWhileHeld(held: 0 | 1) {
    await clearOutbox(db);
    const ids = await seedOutbox(db, [
      { sourceId: 'r68-handback', destination: 'sink' },
      { sourceId: 'r68-handback', destination: 'sink' },
    ]);
    const heldId = (await rowOf(db, ids[held]!)).id;
    let holder: HeldRows | undefined;
    sink.setAnswer(async (d) => {
      if (d.messageId !== ids[0] || holder !== undefined) return 200;
      holder = await holdRows(db.url!, 'outbox', [heldId]);
      return 500;
    });
    let publisher: OutboxPublisher | undefined = startOutboxPublisher({
      db,
      routes: routeTo(sink.url('a')),
      config,
      logger: silent,
    });
    try {
      await waitFor('s1 to be sent and a row held', async () => (holder ? true : undefined));
      const waiting = await waitForWaiters(db, holder!.pid);
      const bound = config.publish_timeout_ms + 1_000 + 3_000;
      const started = Date.now();
      const stopping = publisher.stop();
      const stopped = await Promise.race([
        stopping.then(() => 'stopped' as const),
        new Promise<'still running'>((r) => setTimeout(() => r('still running'), bound)),
      ]);
      const seen = { stopped, afterMs: Date.now() - started, waitingStatement: waiting[0]?.query.trim().slice(0, 80) };
      await holder!.rollback();
      await stopping;
      publisher = undefined;
      expect(seen, `stop() had not returned ${bound} ms after it was called: ${JSON.stringify(seen)}`).toMatchObject({
        stopped: 'stopped',
      });
    } finally {
      await holder?.rollback().catch(() => undefined);
      await publisher?.stop().catch(() => undefined);
    }
  }

  it('stop() returns within its bound while a row the relay hands back is held by another session', async () => {
    // s1 fails; the relay hands back s2, which another session holds.
    await stopWhileHeld(1);
  });

  it('stop() returns within its bound while the row whose failure the relay records is held by another session', async () => {
    // s1 fails and is itself held: the relay's failure write (recordOutboxFailure) waits on it.
    await stopWhileHeld(0);
  });
});
