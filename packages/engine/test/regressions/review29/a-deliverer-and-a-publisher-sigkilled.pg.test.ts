import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { inProcessTransport, publishOutboxBatch } from '../../../src/index.ts';
import type { OutboxEnvelope } from '../../../src/outbox/outbox-envelope.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { msg, processManagerOn, rowsOf } from '../../process/support/process-harness.ts';
import { spawnWorker } from '../../support/spawn-worker.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

const childScript = fileURLToPath(new URL('./support/kill-process-worker.ts', import.meta.url));
const WAIT_MS = 60_000;

/**
 * Review 29, attack 4 with a real process: a child process (support/kill-process-worker.ts) is
 * SIGKILLed while (1) its delivery of a message is inside its transaction, after the outbox insert,
 * holding the instance's row lock, and (2) its outbox pass has claimed three rows and handed them to
 * a transport that never acknowledges. Nothing of the delivery may survive and nothing may be lost:
 * its redelivery applies once; the claimed rows stay Pending in their claim window (no other
 * publisher sends them inside it) and are each published exactly once after it.
 */
describe('a deliverer and a publisher SIGKILLed mid-transaction and mid-publish (PostgreSQL, real process)', () => {
  let db: Database & { url?: string };
  let child: ChildProcess | null = null;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await db.close();
  });

  /** Whether another transaction can take the instance's row lock now (false while the child holds it). */
  async function lockIsFree(id: string): Promise<boolean> {
    return db.prisma
      .$transaction(async (tx) => {
        await tx.$queryRaw`select 1 from "sagaflow"."saga_instances" where id = ${id}::uuid for update nowait`;
        return true;
      })
      .catch((err: unknown) => {
        if (/could not obtain lock|55P03/.test(String((err as Error).message) + JSON.stringify(err))) return false;
        throw err;
      });
  }

  it('the killed delivery leaves nothing and applies once on redelivery; the claimed rows are published once after their window', async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project');
    const { pm } = processManagerOn(db);
    const key = 'r29-kill-order';
    const others = ['r29-pub-a', 'r29-pub-b'];
    const paid = msg.paymentCaptured(key);
    for (const order of [key, ...others])
      await pm.deliver('order-fulfilment', order === key ? paid : msg.paymentCaptured(order));
    const seeded = (await db.prisma.outboxMessage.findMany({ select: { message_id: true } }))
      .map((r) => r.message_id)
      .sort();
    expect(seeded).toHaveLength(3);
    const before = await rowsOf(db, key);
    const id = before.instance!.id;

    let out = '';
    const { proc } = await spawnWorker(childScript, db.url, (p) => {
      child = p;
      p.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    });
    const reserved = `reserved-${key}`;
    await waitFor(
      () => `the child inside its delivery and publishing the three rows: ${out}`,
      async () =>
        out.includes(`in-tx ${reserved}`) && seeded.every((m) => out.includes(`publishing ${m}`)) ? true : undefined,
      WAIT_MS,
    );
    // Mid-transaction for real: the child holds the instance's row lock.
    expect(await lockIsFree(id)).toBe(false);
    const claimed = await db.prisma.outboxMessage.findMany({ where: { message_id: { in: seeded } } });
    expect(claimed.map((r) => [r.status, r.attempts])).toEqual(seeded.map(() => ['Pending', 1]));

    const exited = new Promise<NodeJS.Signals | null>((r) => proc.once('exit', (_c, signal) => r(signal)));
    proc.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    child = null;
    await waitFor(
      'the killed backend to let go of the instance',
      async () => ((await lockIsFree(id)) ? true : undefined),
      WAIT_MS,
    );

    // (1) Nothing of the killed delivery committed.
    const after = await rowsOf(db, key);
    expect({
      state: after.instance?.current_state,
      version: after.instance?.version,
      inbox: after.inbox.map((r) => r.message_id),
      outbox: after.outbox.map((r) => r.type),
      transitions: after.transitions.length,
      timeouts: after.timeouts.length,
    }).toEqual({
      state: 'ReservingInventory',
      version: before.instance?.version,
      inbox: [paid.id],
      outbox: ['ReserveInventory'],
      transitions: 1,
      timeouts: 0,
    });

    // (2) Inside the dead publisher's claim window no other publisher sends its rows; after it, each once.
    const sent: OutboxEnvelope[] = [];
    const routes = { inventory: inProcessTransport((m) => void sent.push(m)) };
    const inWindow = await publishOutboxBatch({ db, routes, clock: new TestClock(new Date()) });
    expect(inWindow.claimed).toBe(0);
    const afterWindow = await publishOutboxBatch({ db, routes, clock: new TestClock(new Date(Date.now() + 31_000)) });
    expect(afterWindow).toMatchObject({ claimed: 3, published: 3, lost: 0 });
    expect(sent.map((m) => [m.messageId, m.attempt]).sort()).toEqual(seeded.map((m) => [m, 2]));
    const published = await db.prisma.outboxMessage.findMany({ where: { message_id: { in: seeded } } });
    expect(published.map((r) => r.status)).toEqual(['Published', 'Published', 'Published']);

    // The redelivery of the killed message applies once, and only once.
    const reservedMsg = msg.inventoryReserved(key, reserved);
    expect((await pm.deliver('order-fulfilment', reservedMsg)).outcome).toBe('applied');
    expect((await pm.deliver('order-fulfilment', reservedMsg)).outcome).toBe('duplicate');
    const done = await rowsOf(db, key);
    expect({
      state: done.instance?.current_state,
      inbox: done.inbox.map((r) => r.message_id).sort(),
      outbox: done.outbox.map((r) => r.type).sort(),
      timeouts: done.timeouts.length,
      applied: done.transitions.filter((t) => t.outcome === 'applied').length,
    }).toEqual({
      state: 'BookingShipment',
      inbox: [paid.id, reserved].sort(),
      outbox: ['BookShipment', 'ReserveInventory'],
      timeouts: 1,
      applied: 2,
    });
  });
});
