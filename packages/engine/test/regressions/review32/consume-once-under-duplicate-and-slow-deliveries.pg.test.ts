import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { consumeOnce } from '../../../src/outbox/consume-once.ts';
import { openTestDatabase } from '../../support/test-database.ts';

/** The consumer's own effect table (a host table beside the engine's schema). */
const effects = 'public.review32_consume_once_effects';

describe('review 32: consumeOnce on real PostgreSQL connections', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
    await db.prisma.$executeRawUnsafe(
      `create table if not exists ${effects} (message_id text not null, n int not null)`,
    );
  });
  afterAll(async () => {
    await db.prisma.$executeRawUnsafe(`drop table if exists ${effects}`);
    await db.close();
  });
  const effectCount = async (messageId: string) =>
    (
      await db.prisma.$queryRawUnsafe<{ n: number }[]>(
        `select count(*)::int as n from ${effects} where message_id = $1`,
        messageId,
      )
    )[0]!.n;

  it('eight concurrent deliveries of one message id, the first of which throws after its effect: the effect is applied exactly once (held)', async () => {
    const messageId = randomUUID();
    let calls = 0;
    const deliver = (i: number) =>
      consumeOnce(db, 'review32-billing', messageId, async (tx) => {
        calls++;
        await tx.$executeRawUnsafe(`insert into ${effects} (message_id, n) values ($1, $2)`, messageId, i);
        if (calls === 1) {
          await sleep(200); // the others queue on the inbox row meanwhile
          throw new Error('handler failed after its effect');
        }
        return i;
      }).catch((err: unknown) => err);

    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => deliver(i)));

    const consumed = results.filter((r) => typeof r === 'object' && r !== null && 'consumed' in r && r.consumed);
    const errors = results.filter((r) => r instanceof Error);
    expect({ consumed: consumed.length, errors: errors.length, effects: await effectCount(messageId) }).toEqual({
      consumed: 1,
      errors: 1,
      effects: 1,
    });
    expect(await consumeOnce(db, 'review32-billing', messageId, () => Promise.resolve(1))).toEqual({ consumed: false });
  });

  it('a handler that runs longer than five seconds is consumed once, not refused on every redelivery', async () => {
    const messageId = randomUUID();
    const deliver = () =>
      consumeOnce(db, 'review32-slow', messageId, async (tx) => {
        await tx.$executeRawUnsafe(`insert into ${effects} (message_id, n) values ($1, 0)`, messageId);
        await sleep(6000); // a downstream call, a report being built...
        return 'done';
      });

    const first = await deliver().catch((err: unknown) => (err instanceof Error ? err.message : String(err)));

    expect({ first, effects: await effectCount(messageId) }).toEqual({
      first: { consumed: true, result: 'done' },
      effects: 1,
    });
  }, 20_000);
});
