import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTallyEngines, type TallyEngines } from '../review54/support/tally-engines.ts';
import { tallyProcess } from '../review54/support/tally-process.ts';

/**
 * Review 56 (ADR 0132 §3: "one entry per instance per minute at most, however often a broker
 * redelivers"). The entry is written by `insert … select … where not exists (an entry for this
 * instance in the last minute)`. Under READ COMMITTED two sessions evaluating that at once both see
 * no entry, and both insert: there is nothing (a unique index, a lock) that makes the check and the
 * insert one step across sessions. Two replicas (two engines, two pools: two processes as the
 * database sees them) whose deliveries to one held instance are refused at the same moment (a broker
 * fanning one message out to two consumers, or two messages to one key) write two entries.
 *
 * The race is driven by progress, not timing: a test-only trigger on `anomaly_log` makes each
 * insert wait on an advisory lock the test holds AFTER its `not exists` was evaluated (a BEFORE ROW
 * trigger fires once the select produced its row); the test lets them go once pg_locks shows both
 * waiting. That widens, it does not create, the window between the check and the commit.
 */
const TX_MS = 1_000;
const GATE = 560_056;

describe('review 56: two replicas refused on one held instance at once (real PostgreSQL)', () => {
  let t: TallyEngines;
  let gate: pg.PoolClient | undefined;
  beforeAll(async () => {
    t = await openTallyEngines({ txMs: TX_MS, replicas: 2, noStoreRetry: true, adminPoolSize: 4, poolSize: 3 });
  });
  afterAll(async () => {
    await gate?.query('select pg_advisory_unlock_all()').catch(() => undefined);
    gate?.release();
    await t?.admin.pool
      ?.query(`drop trigger if exists r56_gate on "sagaflow"."anomaly_log"; drop function if exists r56_gate()`)
      .catch(() => undefined);
    await t?.close();
  });

  it('two deliveries refused at once on one held instance journal process_delivery_held_up once', async () => {
    const [engines, admin] = [t.engines, t.admin];
    const { key, instance: inst } = await t.begin();

    await admin.pool!.query(`
      create function r56_gate() returns trigger language plpgsql as $$
      begin perform pg_advisory_xact_lock_shared(${GATE}); return new; end $$;
      create trigger r56_gate before insert on "sagaflow"."anomaly_log"
        for each row when (new.code = 'process_delivery_held_up') execute function r56_gate();`);
    gate = await admin.pool!.connect();
    await gate.query('select pg_advisory_lock($1)', [GATE]);

    // Another session keeps the instance (an abandoned host transaction, idle in transaction).
    await t.holdInstances([inst.id]);

    // Each replica is handed one message for the instance at the same time.
    const refused = engines.map((engine) =>
      engine.processes.deliver(tallyProcess, { id: randomUUID(), type: 'Add', payload: { key, n: 1 } }).then(
        (r) => `answered ${r.outcome}`,
        (e: unknown) => `threw ${(e as Error).message.replace(/\s+/g, ' ').slice(0, 160)}`,
      ),
    );
    // Both gave up on the held row and are journaling: each waits on an advisory lock, at the gate
    // (its insert) or, where the journal serializes its check and insert per key (ADR 0132), one at
    // the gate and the other behind the key's lock.
    for (let waiting = 0; waiting < 2;) {
      const r = await admin.pool!.query<{ n: number }>(
        `select count(*)::int as n from pg_locks
          where locktype = 'advisory' and not granted
            and database = (select oid from pg_database where datname = current_database())`,
      );
      waiting = r.rows[0]!.n;
      if (waiting < 2) await new Promise((res) => setTimeout(res, 20));
    }
    await gate.query('select pg_advisory_unlock($1)', [GATE]);
    const answers = await Promise.all(refused);
    expect(
      // Each gave up on the held row: its lock wait ran out, or (on a loaded machine) its statement's limit first.
      answers.every((a) => /canceling statement due to (lock|statement) timeout/.test(a)),
      answers.join('; '),
    ).toBe(true);

    const entries = await admin.pool!.query<{ id: string; at: Date }>(
      `select id, at from "sagaflow"."anomaly_log" where code = 'process_delivery_held_up' and row_id = $1`,
      [inst.id],
    );
    expect(
      entries.rows.length,
      `entries for instance ${inst.id} written within one minute: ${JSON.stringify(entries.rows)}`,
    ).toBe(1);
  }, 60_000);
});
