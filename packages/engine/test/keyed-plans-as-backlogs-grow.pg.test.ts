import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { defineProcess, inProcessTransport, instancePendingWork, publishOutboxBatch } from '../src/index.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { waitForBackendsToExit } from './support/wait-for-backends-to-exit.ts';

/** Quarantine budget: a message failing again this long after its first failure quarantines the instance. */
const budgetMs = 30_000;
const shipmentDueMs = 120_000;

/**
 * An order: placed, it books a shipment and arms a deadline; past the deadline it asks for a refund
 * (the payments service is down: that command fails) and releases the stock, two commands in the
 * order's outbox; closed, it notifies (a fourth). A poison note throws (the failure record, then quarantine); a `fragile-…` order's
 * deadline throws when delivered (the timeout stays armed and is retried).
 */
const orders = defineProcess({
  name: 'keyed.orders',
  states: ['New', 'Shipping', 'Refunding', 'Done'],
  initial: 'New',
  final: ['Done'],
  data: z.object({ orderId: z.string(), notes: z.number() }),
  initialData: (orderId) => ({ orderId, notes: 0 }),
  messages: {
    Placed: z.object({ orderId: z.string() }),
    Note: z.object({ orderId: z.string(), poison: z.boolean() }),
    Closed: z.object({ orderId: z.string() }),
  },
  correlate: (m) => m.payload.orderId,
  timeouts: { ShipmentDue: { afterMs: shipmentDueMs, expects: 'Shipping' } },
  on: {
    Placed: [
      {
        from: 'New',
        to: 'Shipping',
        schedule: ['ShipmentDue'],
        then: (d) => ({ emit: [{ type: 'BookShipment', destination: 'shipping', payload: { orderId: d.orderId } }] }),
      },
    ],
    Note: [
      {
        from: 'Shipping',
        to: 'Shipping',
        then: (d, p) => {
          if (p.poison) throw new Error('cannot handle this note');
          return { data: { ...d, notes: d.notes + 1 } };
        },
      },
    ],
    ShipmentDue: [
      {
        from: 'Shipping',
        to: 'Refunding',
        then: (d, _p, { key }) => {
          if (key.startsWith('fragile')) throw new Error('the refund service cannot be reached');
          return {
            emit: [
              { type: 'Refund', destination: 'payments', payload: { orderId: d.orderId } },
              { type: 'ReleaseStock', destination: 'inventory', payload: { orderId: d.orderId } },
            ],
          };
        },
      },
    ],
    Closed: [
      {
        from: 'Refunding',
        to: 'Done',
        then: (d) => ({ emit: [{ type: 'Notify', destination: 'shipping', payload: { orderId: d.orderId } }] }),
      },
    ],
  },
});

/** Rows that take the status the keyed statements test once the plans are made: one read of them is 20 k. */
const backlog = 20_000;
/** Finished orders already there when the statistics are taken: none of them in that status. */
const history = 5_000;
const tables = ['outbox', 'process_timeouts', 'saga_instances'];

/**
 * Per index of the three tables that is not a key (a key finds one row per value): the entries its
 * scans returned, and the pages they and the writes read; per table, the rows sequential scans read.
 */
const countersSql = `
  select i.indexrelname as name, i.idx_tup_read::int as entries, (s.idx_blks_read + s.idx_blks_hit)::int as pages,
         (pg_relation_size(i.indexrelid) / current_setting('block_size')::int)::int as size
    from pg_stat_user_indexes i
    join pg_index x on x.indexrelid = i.indexrelid
    join pg_statio_user_indexes s on s.indexrelid = i.indexrelid
   where i.schemaname = 'sagaflow' and i.relname = any($1) and not x.indisunique
  union all
  select 'seq scan of ' || t.relname, t.seq_tup_read::int, 0, 0
    from pg_stat_user_tables t
   where t.schemaname = 'sagaflow' and t.relname = any($1)`;

interface Counter {
  name: string;
  entries: number;
  pages: number;
  size: number;
}

/** 5 k finished orders, each with its delivered deadline and its published command; then ANALYZE. */
const historySql = (now: string) => `
  with i as (
    insert into "sagaflow"."saga_instances" (process_name, correlation_key, status, current_state, state, version,
                                             state_visit, created_at, updated_at, completed_at)
    select 'keyed.orders', 'history-' || n, 'COMPLETED', 'Done', '{}'::jsonb, 3, 2, '${now}', '${now}', '${now}'
      from generate_series(1, ${history}) n
    returning id),
  d as (
    insert into "sagaflow"."process_timeouts" (instance_id, name, expected_state, armed_visit, due_at, status,
                                               created_at, delivered_at)
    select id, 'ShipmentDue', 'Shipping', 1, '${now}', 'Delivered', '${now}', '${now}' from i
    returning instance_id)
  insert into "sagaflow"."outbox" (message_id, source_kind, source_id, type, destination, payload, status, attempts,
                                   available_at, created_at, published_at)
  select 'history-' || instance_id, 'process', instance_id::text, 'BookShipment', 'shipping', '{}'::jsonb,
         'Published', 1, '${now}', '${now}', '${now}'
    from d;
  ${tables.map((table) => `alter table "sagaflow"."${table}" set (autovacuum_enabled = false);`).join('\n')}
  ${tables.map((table) => `analyze "sagaflow"."${table}";`).join('\n')}`;

/**
 * ADR 0098, outside the runs. The outbox's, the process timeouts' and the instances' statements find
 * their row by its key (an outbox row, a timeout, an instance by its id; an instance's armed timers by
 * the instance) and test its status through `status_in`. Written as a plain `status = …`, the test
 * lets the planner read the rows through an index of that status instead (the Pending outbox rows',
 * the armed timers', the open instances'): the cheapest path by the statistics of an ANALYZE taken
 * while no row had the status. These statements go through Prisma as unnamed statements, planned at
 * every execution, but from those same statistics until something analyzes the table again: once
 * 20 k rows take the status at once (a broker outage, a day of armed deadlines, a message that
 * quarantines thousands of instances), every execution of such a statement would read all of them.
 *
 * Each case: 5 k finished orders, analyzed with none in the status, autovacuum off for the three
 * tables; three rounds of work through the engine; 20 k rows written by SQL in the status its
 * family's statements test; the engine's counters flushed; more rounds on the same connections; the
 * engine closed. Counted over that last phase: every entry read from an index of the three tables
 * that is not a key, and every row read by a sequential scan. Each keyed statement reads a few entries
 * (from 30 to 100 in all per case when written); one read of the backlog is 20 k, and a keyed
 * statement that went through a status index would read it at every execution. So no index may give
 * more than 1 k entries, and all of them together fewer than half a read of the backlog.
 *
 * The statements that look rows up BY their status (the publisher's claim, the timeout scheduler's
 * claim and its hold-back of a quarantined instance's timers) are held to the same bound where their
 * case puts the backlog in their way: the outbox case's backlog is in front of the queue, and the
 * instances case's scheduler holds back a quarantined instance's timer beside 20 k quarantined
 * instances (each due timer's instance found by its id: before, every open instance was read per
 * due timer, 120 k entries over the phase). Where a case keeps one of them off its backlog, it says so.
 */
describe('an outbox row, a timeout or an instance is found by its key however many share its status (PostgreSQL)', () => {
  let t: Awaited<ReturnType<typeof openTestEngine>> | undefined;
  let url = '';
  let closed = false;
  const logger = pino({ level: 'silent' });

  const open = async () => {
    t = await openTestEngine({
      flows: [],
      actions: [],
      processes: [orders],
      // A failing timeout's retry is kept at 30 s (no backoff, ADR 0127): each round fails every
      // fragile timer again, so the counts per round stay known.
      config: { processes: { quarantine_after_seconds: budgetMs / 1000, timeout_retry_max_seconds: 30 } },
    });
    closed = false;
    url = (t.db as { url?: string }).url ?? '';
    await t.db.driver.exec(historySql(t.clock.now().toISOString()));
    return t;
  };
  const close = async () => {
    if (closed) return;
    closed = true;
    await t?.closeAll();
  };
  afterEach(close);

  const countersOf = async (): Promise<Map<string, Counter>> => {
    const reader = new pg.Client({ connectionString: url });
    await reader.connect();
    try {
      const { rows } = await reader.query<Counter>(countersSql, [tables]);
      return new Map(rows.map((r) => [r.name, r]));
    } finally {
      await reader.end();
    }
  };

  /**
   * The counters as they stand, the engine's own included: a backend keeps what it counted for up to
   * 10 s before it flushes it, so each of the pool's connections (every connection the engine has:
   * checked) is made to flush now.
   */
  const countersNow = async (alsoOpen: number[] = []) => {
    const pool = t!.db.pool!;
    const clients = await Promise.all(Array.from({ length: pool.totalCount }, () => pool.connect()));
    try {
      const pids: number[] = [];
      for (const c of clients)
        pids.push(
          (await c.query<{ pid: number }>('select pg_backend_pid() as pid, pg_stat_force_next_flush()')).rows[0]!.pid,
        );
      const { rows } = await clients[0]!.query<{ pid: number }>(
        'select pid from pg_stat_activity where datname = current_database() and pid <> all($1)',
        [[...pids, ...alsoOpen]],
      );
      expect(rows, 'backends of the database outside the engine pool').toEqual([]);
    } finally {
      for (const c of clients) c.release();
    }
    return countersOf();
  };

  /** The counters once the engine is closed and every backend of its database has exited (flushing them). */
  const countersAtEnd = async () => {
    await close();
    await waitForBackendsToExit(inject('pgAdminUrl'), url);
    return countersOf();
  };

  /** What was read between two readings of the counters, per index (and sequential scans), and the entries in all. */
  const readBetween = (before: Map<string, Counter>, after: Map<string, Counter>) => {
    const rows = [...after.values()].map((a) => {
      const b = before.get(a.name);
      return { name: a.name, entries: a.entries - (b?.entries ?? 0), pages: a.pages - (b?.pages ?? 0), size: a.size };
    });
    return { rows, entries: rows.reduce((sum, r) => sum + r.entries, 0) };
  };

  /** Places orders (each saved in Shipping with its deadline armed and a shipment to book); their instance ids. */
  const place = async (keys: string[]) => {
    const ids: string[] = [];
    for (const key of keys) {
      const r = await t!.engine.processes.deliver('keyed.orders', {
        id: `placed-${key}`,
        type: 'Placed',
        payload: { orderId: key },
      });
      expect(r.outcome).toBe('applied');
      ids.push(r.instanceId!);
    }
    return ids;
  };

  it('the outbox: rows published, failed and handed back after 20 k went Pending read no more than before', async () => {
    await open();
    const published: string[] = [];
    const routes = {
      shipping: inProcessTransport((m) => void published.push(m.messageId)),
      inventory: inProcessTransport((m) => void published.push(m.messageId)),
      payments: inProcessTransport(() => {
        throw new Error('payments is down');
      }),
    };
    // One attempt: a failed row goes Dead, so no row of the case waits in backoff at the queue's front.
    const publish = (batchSize: number) =>
      publishOutboxBatch({
        db: t!.db,
        routes,
        clock: t!.clock,
        logger,
        config: { batch_size: batchSize, max_attempts: 1 },
      });
    // Another publisher claiming a source at that moment: while it holds the source's advisory lock,
    // this one's claim skips the source.
    const rival = new pg.Client({ connectionString: url });
    await rival.connect();
    const lockSql = (fn: string) => `select ${fn}(hashtextextended('sagaflow.outbox:' || $1, 0))`;
    let before: Map<string, Counter> | undefined;
    let round = 0;
    /**
     * Two orders, x then y, whose deadlines pass and which are then closed: each order's source holds,
     * in seq order, its BookShipment, its Refund and ReleaseStock, and its Notify (sent at the close,
     * after both orders' refunds). Six passes: x's BookShipment, y's; x's Refund and ReleaseStock
     * claimed together (y's source held by the rival, x gets the whole batch of two), the Refund
     * failing and the ReleaseStock behind it handed back; that ReleaseStock; y's Refund, failing; y's
     * ReleaseStock. markOutboxBatchPublished runs 4 times, recordOutboxFailure twice,
     * releaseOutboxClaim once. The Notify rows are left to the drain, before the backlog only.
     *
     * The backlog is in front of the queue, as an outage leaves it: its rows come before the case's in
     * seq order, all of one source whose head waits for its backoff. So every pass after it finds no
     * due head in the front read (limit × 4 rows of the backlog) and falls back to the skip scan over
     * the sources, and every claim reads the case's sources, behind the backlog. Planned from the
     * statistics of an empty queue (every Pending row estimated free to read), a source's Pending rows
     * and its head used to be read by walking the queue in seq order (outbox_pending_seq_idx, filtered
     * by source) and the skip scan's steps by reading and sorting it whole: 0.96 M entries over this
     * phase. Each is now read through outbox_pending_source_id_seq_idx (claim-outbox-batch.ts).
     */
    const runRound = async (drain: boolean) => {
      round++;
      const sent = published.length;
      // y placed a second after x: its deadline, and so its commands, come after x's.
      await place([`x-${round}`]);
      t!.clock.advance(1_000);
      const [y] = await place([`y-${round}`]);
      t!.clock.advance(shipmentDueMs);
      expect(await t!.engine.processes.sweepProcessTimeouts()).toEqual({ delivered: 2, failed: 0 });
      for (const key of [`x-${round}`, `y-${round}`]) {
        const closed = { id: `closed-${key}`, type: 'Closed', payload: { orderId: key } };
        expect((await t!.engine.processes.deliver('keyed.orders', closed)).outcome).toBe('applied');
      }
      const one = { claimed: 1, published: 1, retried: 0, dead: 0, released: 0, lost: 0 };
      expect(await publish(1)).toEqual(one);
      expect(await publish(1)).toEqual(one);
      await rival.query(lockSql('pg_advisory_lock'), [y]);
      expect(await publish(2)).toEqual({ claimed: 2, published: 0, retried: 0, dead: 1, released: 1, lost: 0 });
      await rival.query(lockSql('pg_advisory_unlock'), [y]);
      expect(await publish(1)).toEqual(one);
      expect(await publish(1)).toEqual({ ...one, published: 0, dead: 1 });
      expect(await publish(1)).toEqual(one);
      expect(published.length - sent).toBe(4);
      if (drain) while ((await publish(16)).claimed > 0);
    };
    try {
      for (let i = 0; i < 3; i++) await runRound(true);
      // The outage: 20 k rows Pending, in backoff for a day, in front of the rows the next round writes.
      const later = new Date(t!.clock.now().getTime() + 24 * 3600_000).toISOString();
      await t!.db.driver.exec(`
        insert into "sagaflow"."outbox" (message_id, source_kind, source_id, type, destination, payload, attempts,
                                         available_at, last_error, created_at)
        select 'backlog-' || n, 'process', 'keyed.outage', 'Refund', 'payments', '{}'::jsonb, 3,
               '${later}', 'payments is down', now()
          from generate_series(1, ${backlog}) n;`);
      const { rows: rivalBackend } = await rival.query<{ pid: number }>('select pg_backend_pid() as pid');
      before = await countersNow([rivalBackend[0]!.pid]);
      await runRound(false);
    } finally {
      await rival.end();
    }

    const { rows, entries } = readBetween(before, await countersAtEnd());
    // 7 keyed statements, and 6 claims reading their front of the queue (limit × 4 rows of the
    // backlog), a skip scan of its 3 sources and their rows (about 140 entries in all when
    // written); one read of the backlog is 20 k.
    expect(rows.filter((r) => r.entries > 1_000)).toEqual([]);
    expect(entries).toBeLessThan(backlog / 2);
  });

  it('the timeouts: deadlines armed, listed, delivered and failed after 20 k were armed read no more than before', async () => {
    await open();
    const pm = t!.engine.processes;
    let round = 0;
    let passesAfterBacklog = 0;
    let afterBacklog = false;
    /**
     * Three orders placed (saveSagaInstance and its next-timer subquery, 3 times), their armed timers
     * listed (listInstanceTimeouts, 3), a note on one (a save, 1); the deadlines pass and one pass of
     * the scheduler delivers two (markProcessTimeoutDelivered, 2; saves into Refunding, where no timer
     * is armed, 2) and fails the `fragile-…` ones, this round's and each earlier one due again for its
     * retry (markProcessTimeoutFailed, once per round so far).
     */
    const runRound = async () => {
      round++;
      const ids = await place([`fragile-${round}`, `a-${round}`, `b-${round}`]);
      for (const id of ids) expect((await instancePendingWork(t!.db, id)).timeouts).toHaveLength(1);
      const note = { id: `note-${round}`, type: 'Note', payload: { orderId: `a-${round}`, poison: false } };
      expect((await pm.deliver('keyed.orders', note)).outcome).toBe('applied');
      t!.clock.advance(shipmentDueMs);
      expect(await pm.sweepProcessTimeouts()).toEqual({ delivered: 2, failed: round });
      if (afterBacklog) passesAfterBacklog++;
    };
    for (let i = 0; i < 3; i++) await runRound();
    // A day of orders waiting on their shipment, each with its deadline armed for tomorrow.
    const later = new Date(t!.clock.now().getTime() + 24 * 3600_000).toISOString();
    await t!.db.driver.exec(`
      with i as (
        insert into "sagaflow"."saga_instances" (process_name, correlation_key, status, current_state, state, version,
                                                 state_visit, created_at, updated_at)
        select 'keyed.orders', 'backlog-' || n, 'ACTIVE', 'Shipping', '{}'::jsonb, 1, 1, now(), now()
          from generate_series(1, ${backlog}) n
        returning id)
      insert into "sagaflow"."process_timeouts" (instance_id, name, expected_state, armed_visit, due_at, created_at)
      select id, 'ShipmentDue', 'Shipping', 1, '${later}', now() from i;`);
    const before = await countersNow();
    afterBacklog = true;
    for (let i = 0; i < 2; i++) await runRound();

    const { rows, entries } = readBetween(before, await countersAtEnd());
    // The scheduler's pass ends with a claim (and a count) that finds nothing due: bounded by due_at,
    // it stops at the first timer due later, before the backlog (before that bound it walked every
    // armed timer, 20 k entries a pass). 31 keyed statements and the other claims read about 100
    // entries in all when written; one read of the backlog is 20 k.
    const armed = 'process_timeouts_pending_due_at_id_idx';
    expect(passesAfterBacklog).toBe(2);
    expect(rows.filter((r) => r.entries > 1_000)).toEqual([]);
    expect(entries).toBeLessThan(backlog / 2);
    // A plain `id = … and status = 'Pending'` (a timeout marked delivered or failed) is served by the
    // armed timers' index (due_at, id) with `id = …` as its condition: the scan compares every entry
    // inside the index and returns only the match, so the entries above do not show it; its pages do.
    // Everything else reads fewer pages than one walk of the index (about 45 when written, of 130).
    const pages = rows.find((r) => r.name === armed)!;
    expect(pages.pages).toBeLessThan(pages.size);
  });

  it('the instances: failures written and quarantines released after 20 k went ACTIVE and 20 k QUARANTINED read no more than before', async () => {
    await open();
    const pm = t!.engine.processes;
    let round = 0;
    /**
     * Two orders placed (saveSagaInstance, 2); a note on the second (a save); a poison note on the first
     * fails (writeInstanceFailure: the failure record) and fails again past the budget
     * (writeInstanceFailure: the quarantine). Both deadlines pass: the scheduler's pass holds the
     * quarantined one back (recordHeldTimeouts: its history row, found by the instance's id) and
     * delivers the other's. The instance is released, the note skipped (releaseSagaInstance), and the
     * next pass delivers its deadline.
     */
    const runRound = async () => {
      round++;
      const [a] = await place([`a-${round}`, `b-${round}`]);
      const note = { id: `note-${round}`, type: 'Note', payload: { orderId: `b-${round}`, poison: false } };
      expect((await pm.deliver('keyed.orders', note)).outcome).toBe('applied');
      const poison = { id: `poison-${round}`, type: 'Note', payload: { orderId: `a-${round}`, poison: true } };
      await expect(pm.deliver('keyed.orders', poison)).rejects.toThrow('cannot handle this note');
      t!.clock.advance(budgetMs);
      expect(await pm.deliver('keyed.orders', poison)).toEqual({ outcome: 'quarantined', instanceId: a });
      t!.clock.advance(shipmentDueMs);
      expect(await pm.sweepProcessTimeouts()).toEqual({ delivered: 1, failed: 0 });
      const [held] = await t!.db.driver.query<{ n: number }>(
        `select count(*)::int as n from "sagaflow"."process_transitions"
          where instance_id = $1 and outcome = 'skipped_quarantined' and message_type = 'ShipmentDue'`,
        [a],
      );
      expect(held!.n).toBe(1);
      const released = await pm.release(a!, { mode: 'skip', operator: 'test', reason: 'keyed plans' });
      expect(released.outcome).toBe('skipped');
      expect(await pm.sweepProcessTimeouts()).toEqual({ delivered: 1, failed: 0 });
    };
    for (let i = 0; i < 3; i++) await runRound();
    // A day of orders in flight, and as many quarantined by a message none of them could handle.
    await t!.db.driver.exec(`
      insert into "sagaflow"."saga_instances" (process_name, correlation_key, status, current_state, state, version,
                                               state_visit, created_at, updated_at, failure_redelivery_key,
                                               failure_message_type, failure_error_type, failure_message,
                                               first_failed_at)
      select 'keyed.orders', 'backlog-' || n, case when n % 2 = 0 then 'ACTIVE' else 'QUARANTINED' end, 'Shipping',
             '{}'::jsonb, 1, 1, now(), now(), case when n % 2 = 1 then 'note-backlog-' || n end,
             case when n % 2 = 1 then 'Note' end, case when n % 2 = 1 then 'Error' end,
             case when n % 2 = 1 then 'downstream is down' end, case when n % 2 = 1 then now() end
        from generate_series(1, ${2 * backlog}) n;`);
    const before = await countersNow();
    for (let i = 0; i < 2; i++) await runRound();

    const { rows, entries } = readBetween(before, await countersAtEnd());
    // 2 rounds of keyed statements read a few entries each (about 30 in all when written), and two
    // passes of the scheduler a round; one read of either backlog is 20 k.
    expect(rows.filter((r) => r.entries > 1_000)).toEqual([]);
    expect(entries).toBeLessThan(backlog / 2);
  });
});
