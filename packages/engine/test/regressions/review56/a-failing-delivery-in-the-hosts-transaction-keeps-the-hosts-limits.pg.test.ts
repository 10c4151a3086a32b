import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, defineProcess, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';

/**
 * Review 56 (ADR 0132 §2: "inside a host's transaction the host's two settings are put back"). Two
 * cases review 55's test did not reach: the host set its limits with a session-level `SET` (not
 * `SET LOCAL`), and the delivery's handler throws, so the delivery's savepoint rolls back and a
 * failure record is written in a second savepoint of the host's transaction. Expected: after
 * `deliver(…, { tx })` (answered or thrown) the host's transaction reads its own limits, its long
 * statement runs, and its COMMIT commits; after it, the session keeps the host's session limits.
 */
const TX_MS = 1_000;

const brittle = defineProcess({
  name: 'r56-brittle',
  states: ['Open', 'Done'],
  initial: 'Open',
  final: ['Done'],
  data: z.object({ key: z.string() }),
  initialData: (key) => ({ key }),
  messages: { Poke: z.object({ key: z.string() }) },
  correlate: (m) => m.payload.key,
  on: {
    Poke: [
      {
        from: 'Open',
        to: 'Open',
        then: () => {
          throw new Error('r56: the handler fails');
        },
      },
    ],
  },
});

describe("review 56: a failing delivery in the host's transaction (real PostgreSQL)", () => {
  let db: Database & { url?: string };
  let engine: Engine;
  let host: pg.Client;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 4 });
    engine = createEngine({
      db,
      flows: [],
      actions: [],
      processes: [brittle],
      config: {
        processes: { transaction_timeout_ms: TX_MS, quarantine_after_seconds: 3600 },
        logging: { anomaly_level: null },
      },
      logger: pino({ level: 'silent' }),
    });
    host = new pg.Client({ connectionString: db.url });
    await host.connect();
  });
  afterAll(async () => {
    await host?.end();
    await db?.close();
  });

  const setting = async (name: string) =>
    (await host.query<{ s: string }>(`select current_setting('${name}') as s`)).rows[0]!.s;

  it("a host's session-level limits survive a delivery that fails and records its failure in the host's transaction", async () => {
    await host.query(`set statement_timeout = '5min'`);
    await host.query(`set lock_timeout = '2min'`);
    await host.query('begin');
    const key = `k-${randomUUID()}`;
    const delivered = await engine.processes
      .deliver(brittle, { id: randomUUID(), type: 'Poke', payload: { key } }, { tx: host })
      .then(
        (r) => `answered ${r.outcome}`,
        (e: unknown) => `threw ${(e as Error).message.slice(0, 80)}`,
      );
    const inTx = { statement_timeout: await setting('statement_timeout'), lock_timeout: await setting('lock_timeout') };
    const report = await host.query('select pg_sleep(1.5)').then(
      () => 'ran',
      (e: unknown) => `cancelled: ${(e as Error).message}`,
    );
    const commit = await host.query('commit').then(
      (x) => x.command,
      (e: unknown) => String(e),
    );
    const failure = await db.prisma.sagaInstance.findFirst({ where: { correlation_key: key } });
    const afterTx = {
      statement_timeout: await setting('statement_timeout'),
      lock_timeout: await setting('lock_timeout'),
    };
    expect(
      { inTx, report, commit, afterTx, failureRecorded: (failure?.failure_error_type ?? null) !== null },
      `the delivery ${delivered}`,
    ).toEqual({
      inTx: { statement_timeout: '5min', lock_timeout: '2min' },
      report: 'ran',
      commit: 'COMMIT',
      afterTx: { statement_timeout: '5min', lock_timeout: '2min' },
      failureRecorded: true,
    });
  }, 60_000);
});
