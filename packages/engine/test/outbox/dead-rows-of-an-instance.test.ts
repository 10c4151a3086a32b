import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { listDeadOutbox } from '../../src/outbox/list-dead-outbox.ts';
import { instancePendingWork } from '../../src/process/instance-pending-work.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { clearOutbox } from './seed-outbox.ts';

/**
 * Review 48, ADR 0122: an instance's Dead outbox rows are found however many later rows it wrote. The
 * instance's list (`instancePendingWork`, the console's instance page and `sagaflow instance show`) is its
 * newest rows and then every older Dead one; `listDeadOutbox` of an instance (what `sagaflow requeue
 * --instance` drafts against) reads them page by page, longest dead first.
 */
describe(`the Dead outbox rows of an instance (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });
  beforeEach(async () => {
    await clearOutbox(db);
  });

  /** Rows of one source in seq order: 'D' Dead (died `n` ms after a base time), 'P' Published, 'W' Pending. */
  async function write(sourceId: string, statuses: string, tag: string): Promise<{ id: string; status: string }[]> {
    const rows: { id: string; status: string }[] = [];
    for (const [n, s] of [...statuses].entries()) {
      const status = s === 'D' ? 'Dead' : s === 'P' ? 'Published' : 'Pending';
      const id = randomUUID();
      await db.prisma.$executeRaw`
        insert into "sagaflow"."outbox" (id, message_id, source_kind, source_id, type, destination, payload, status, attempts, available_at, published_at)
        values (${id}::uuid, ${`${tag}-${n}`}, 'process', ${sourceId}, 'Charge', 'billing', '{}'::jsonb, ${status},
                ${status === 'Dead' ? 5 : 1}, timestamptz '2026-01-01T00:00:00Z' + ${n} * interval '1 ms',
                ${status === 'Published' ? new Date() : null}::timestamptz)`;
      rows.push({ id, status });
    }
    return rows;
  }

  it("lists the instance's newest rows, then the Dead rows older than them, newest first, and says older rows exist", async () => {
    const instance = randomUUID();
    // Dead, Published, Dead, then 30 Published: with a page of 10, both Dead rows are older than it.
    const rows = await write(instance, 'DPD' + 'P'.repeat(30), 'old-dead');
    await write(randomUUID(), 'DDD', 'other');
    const work = await instancePendingWork(db, instance, { limit: 10 });
    expect(work.outbox.map((o) => o.id)).toEqual([
      ...rows
        .slice(-10)
        .reverse()
        .map((r) => r.id),
      rows[2]!.id,
      rows[0]!.id,
    ]);
    expect(work.outbox.slice(10).map((o) => o.status)).toEqual(['Dead', 'Dead']);
    expect(work.outboxTruncated).toBe(true);
    expect(work.deadOutboxNotListed).toBe(0);
  });

  it('adds nothing when the page holds every row, and says no older rows exist', async () => {
    const instance = randomUUID();
    const rows = await write(instance, 'DPPW', 'short');
    const work = await instancePendingWork(db, instance, { limit: 10 });
    expect(work.outbox.map((o) => o.id)).toEqual(rows.map((r) => r.id).reverse());
    expect(work).toMatchObject({ outboxTruncated: false, deadOutboxNotListed: 0 });
  });

  it('says older rows exist when none of them is Dead, and lists no row twice', async () => {
    const instance = randomUUID();
    const rows = await write(instance, 'P'.repeat(12) + 'D' + 'PP', 'recent-dead');
    const work = await instancePendingWork(db, instance, { limit: 5 });
    expect(work.outbox.map((o) => o.id)).toEqual(
      rows
        .slice(-5)
        .reverse()
        .map((r) => r.id),
    );
    expect(work).toMatchObject({ outboxTruncated: true, deadOutboxNotListed: 0 });
  });

  it("reads every Dead row of an instance page by page, longest dead first, and none of another's", async () => {
    const instance = randomUUID();
    const rows = await write(instance, 'DPDDPDDDP', 'paged');
    await write(randomUUID(), 'DDDD', 'not-mine');
    // Two rows that died at the same moment: the id orders them, and paging neither skips nor repeats one.
    await db.prisma.$executeRaw`
      update "sagaflow"."outbox" set available_at = timestamptz '2026-01-01T00:00:00.003Z'
       where id in (${rows[3]!.id}::uuid, ${rows[5]!.id}::uuid)`;
    const seen: string[] = [];
    let after: { availableAt: string; id: string } | undefined;
    for (let page = 0; page < 10; page++) {
      const got = await listDeadOutbox(db, { limit: 2, instanceId: instance.toUpperCase(), after });
      seen.push(...got.map((r) => r.id));
      if (got.length < 2) break;
      after = { availableAt: got.at(-1)!.availableAt, id: got.at(-1)!.id };
    }
    const dead = rows.filter((r) => r.status === 'Dead').map((r) => r.id);
    expect([...seen].sort()).toEqual([...dead].sort());
    expect(new Set(seen).size).toBe(seen.length);
    const all = await listDeadOutbox(db, { limit: 500, instanceId: instance });
    expect(all.map((r) => r.id)).toEqual(seen);
    expect(all.every((r) => r.sourceId === instance && r.status === 'Dead')).toBe(true);
    expect(await listDeadOutbox(db, { limit: 10, instanceId: 'not-a-uuid' })).toEqual([]);
  });
});
