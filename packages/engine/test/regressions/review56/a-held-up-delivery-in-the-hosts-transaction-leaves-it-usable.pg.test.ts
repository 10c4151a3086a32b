import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTallyEngines, type TallyEngines } from '../review54/support/tally-engines.ts';
import { tallyProcess } from '../review54/support/tally-process.ts';

/**
 * Review 56 (ADR 0132 §2, §3). `deliver(…, { tx })` to an instance a third session holds gives up
 * within its limit (55P03) inside the host's transaction. Expected: the host's transaction is still
 * usable (the engine's savepoint was rolled back, not the host's transaction), it reads its own
 * limits, its own writes commit; and the `process_delivery_held_up` entry, written through the
 * engine's own pool, stays whatever the host decides (here the host rolls back).
 */
const TX_MS = 1_000;

describe("review 56: a held-up delivery inside the host's transaction (real PostgreSQL)", () => {
  let t: TallyEngines;
  let host: pg.Client;
  beforeAll(async () => {
    t = await openTallyEngines({ txMs: TX_MS });
    host = new pg.Client({ connectionString: t.admin.url });
    await host.connect();
  });
  afterAll(async () => {
    await host?.end();
    await t?.close();
  });

  it("the host's transaction survives the refusal with its own limits, and the journal entry outlives its rollback", async () => {
    const [engine, admin] = [t.engines[0]!, t.admin];
    const { key, instance: inst } = await t.begin();
    await t.holdInstances([inst.id]);

    await host.query('begin');
    await host.query(`set local statement_timeout = '5min'`);
    await host.query(`set local lock_timeout = '2min'`);
    await host.query('create temporary table r56_host_work (n int) on commit drop');
    await host.query('insert into r56_host_work values (1)');
    const delivered = await engine.processes
      .deliver(tallyProcess, { id: randomUUID(), type: 'Add', payload: { key, n: 1 } }, { tx: host })
      .then(
        (r) => `answered ${r.outcome}`,
        (e: unknown) => `threw ${(e as Error).message.replace(/\s+/g, ' ').slice(0, 400)}`,
      );
    expect(delivered, delivered).toMatch(/(lock|statement) timeout/);
    const usable = await host.query<{ n: number }>('select count(*)::int as n from r56_host_work').then(
      (r) => `usable, its own row: ${r.rows[0]!.n}`,
      (e: unknown) => `unusable: ${(e as Error).message}`,
    );
    const limits = (
      await host
        .query<{ s: string; l: string }>(
          `select current_setting('statement_timeout') as s, current_setting('lock_timeout') as l`,
        )
        .catch(() => ({ rows: [{ s: '?', l: '?' }] }))
    ).rows[0];
    await host.query('rollback');
    const entries = await admin.pool!.query<{ code: string }>(
      `select code from "sagaflow"."anomaly_log" where code = 'process_delivery_held_up' and row_id = $1`,
      [inst.id],
    );
    expect({ usable, limits, journal: entries.rows.map((r) => r.code) }).toEqual({
      usable: 'usable, its own row: 1',
      limits: { s: '5min', l: '2min' },
      journal: ['process_delivery_held_up'],
    });
  }, 60_000);
});
