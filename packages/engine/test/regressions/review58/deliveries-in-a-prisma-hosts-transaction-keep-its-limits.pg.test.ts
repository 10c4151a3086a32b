import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { tallyProcess, tracesOf } from '../review54/support/tally-process.ts';

/**
 * Review 58 (ADR 0132 §2, ADR 0028). Reviews 55 and 56 drove `deliver(…, { tx })` with a `pg.Client`
 * host. Here the host is a Prisma interactive transaction on the engine's own pool (ADR 0028's Prisma
 * host), with `SET LOCAL` limits of its own, and three deliveries in it: a new message, the same message
 * again (the inbox's duplicate) and a second message. After each, the host's two settings are its own;
 * a host statement longer than the engine's limit runs; the host's commit carries all of it, and a
 * host's rollback leaves none of it.
 */
const TX_MS = 1_000;

describe("review 58: deliveries in a Prisma host's transaction (real PostgreSQL)", () => {
  let db: Database & { url?: string };
  let engine: Engine;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    engine = createEngine({
      db,
      flows: [],
      actions: [],
      processes: [tallyProcess],
      config: { processes: { transaction_timeout_ms: TX_MS }, logging: { anomaly_level: null } },
      logger: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    await db?.close();
  });

  const settings = async (tx: { $queryRawUnsafe: Database['prisma']['$queryRawUnsafe'] }) =>
    (
      await tx.$queryRawUnsafe<{ s: string; l: string }[]>(
        "select current_setting('statement_timeout') as s, current_setting('lock_timeout') as l",
      )
    )[0];

  it("the host's limits hold after a new, a duplicate and a further delivery, and its commit carries them", async () => {
    const key = `k-${randomUUID()}`;
    const begin = { id: randomUUID(), type: 'Begin', payload: { key } };
    const add = { id: randomUUID(), type: 'Add', payload: { key, n: 2 } };
    const seen = await db.prisma.$transaction(
      async (tx) => {
        await tx.$executeRawUnsafe(`set local statement_timeout = '5min'`);
        await tx.$executeRawUnsafe(`set local lock_timeout = '2min'`);
        const out: unknown[] = [];
        for (const m of [begin, begin, add]) {
          const r = await engine.processes.deliver(tallyProcess, m, { tx });
          out.push({ outcome: r.outcome, ...(await settings(tx)) });
        }
        const report = await tx.$executeRawUnsafe('select pg_sleep(1.5)').then(
          () => 'ran',
          (e: unknown) => `cancelled: ${(e as Error).message.slice(-120)}`,
        );
        return { out, report };
      },
      { timeout: 20_000, maxWait: 5_000 },
    );
    expect(seen).toEqual({
      out: [
        { outcome: 'applied', s: '5min', l: '2min' },
        { outcome: 'duplicate', s: '5min', l: '2min' },
        { outcome: 'applied', s: '5min', l: '2min' },
      ],
      report: 'ran',
    });
    expect(await tracesOf(db, [begin.id, add.id])).toEqual([
      { message_id: begin.id, applied: 1, inbox: 1, outbox: 0 },
      { message_id: add.id, applied: 1, inbox: 1, outbox: 1 },
    ]);
  }, 40_000);

  it("a host's rollback after deliveries leaves none of them", async () => {
    const key = `k-${randomUUID()}`;
    const begin = { id: randomUUID(), type: 'Begin', payload: { key } };
    const add = { id: randomUUID(), type: 'Add', payload: { key, n: 3 } };
    const rolledBack = await db.prisma
      .$transaction(
        async (tx) => {
          await tx.$executeRawUnsafe(`set local statement_timeout = '5min'`);
          await engine.processes.deliver(tallyProcess, begin, { tx });
          await engine.processes.deliver(tallyProcess, add, { tx });
          throw new Error('r58: the host changes its mind');
        },
        { timeout: 20_000, maxWait: 5_000 },
      )
      .catch((e: unknown) => (e as Error).message);
    expect(rolledBack).toBe('r58: the host changes its mind');
    expect(await tracesOf(db, [begin.id, add.id])).toEqual([
      { message_id: begin.id, applied: 0, inbox: 0, outbox: 0 },
      { message_id: add.id, applied: 0, inbox: 0, outbox: 0 },
    ]);
    expect(await db.prisma.sagaInstance.count({ where: { correlation_key: key } })).toBe(0);
  }, 40_000);
});
