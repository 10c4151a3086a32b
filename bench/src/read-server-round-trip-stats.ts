import type { StatementKind } from './summarise-round-trips.ts';
import { withPgClient } from './with-pg-client.ts';

/** What the server says one kind of hot statement cost it, per call (pg_stat_statements). */
export interface ServerStatementCost {
  readonly calls: number;
  readonly execMs: number;
  readonly planMs: number;
  /** Plans made per call: 1 when every call is planned afresh (custom plans), near 0 once a generic plan is kept. */
  readonly plansPerCall: number;
}

/** The server's WAL writes and flushes over the window (pg_stat_wal, with track_wal_io_timing on). */
export interface WalFlushes {
  readonly records: number;
  readonly writes: number;
  readonly syncs: number;
  readonly writeMs: number;
  readonly syncMs: number;
}

export interface ServerRoundTripStats {
  readonly statements: Partial<Record<StatementKind, ServerStatementCost>>;
  readonly wal: WalFlushes;
}

/** The hot statements' leading comments as pg_stat_statements keeps them (it stores the prepared text). */
const comments: [string, StatementKind][] = [
  ['/* sagaflow: start with first step */%', 'start'],
  ['/* sagaflow: starts */%', 'start'],
  ['/* sagaflow: step transitions */%', 'transition'],
  ['/* sagaflow: top-level run finishes */%', 'finish'],
];

/**
 * Turns on what {@link readServerRoundTripStats} reads: the time of each WAL write and flush, and the
 * planning time of each statement; and applies the caller's `name=value` settings. ALTER SYSTEM, so
 * they outlive the durable restart (ADR 0025).
 */
export async function trackServerRoundTrips(adminUrl: string, settings: readonly string[] = []): Promise<void> {
  await withPgClient(adminUrl, async (c) => {
    await c.query('alter system set track_wal_io_timing = on');
    await c.query('alter system set pg_stat_statements.track_planning = on');
    for (const setting of settings) {
      const [name, value] = setting.split(/=(.*)/s);
      if (!name || value === undefined || !/^[a-z_.]+$/.test(name))
        throw new Error(`--set takes name=value (a server setting), not ${JSON.stringify(setting)}`);
      await c.query(`alter system set ${name} = ${c.escapeLiteral(value)}`);
    }
    await c.query('select pg_reload_conf()');
  });
}

/** Forgets the statement and WAL counters so far (after a warm-up). */
export async function resetServerRoundTripStats(adminUrl: string): Promise<void> {
  await withPgClient(adminUrl, async (c) => {
    await c.query('select pg_stat_statements_reset()');
    await c.query(`select pg_stat_reset_shared('wal')`);
  });
}

/** Per kind of hot statement in database `name`, the server's execution and planning time, and the WAL's flushes. */
export async function readServerRoundTripStats(adminUrl: string, name: string): Promise<ServerRoundTripStats> {
  return withPgClient(adminUrl, async (c) => {
    const statements: Partial<Record<StatementKind, ServerStatementCost>> = {};
    for (const [pattern, kind] of comments) {
      const { rows } = await c.query<{ calls: string; plans: string; exec: number; plan: number }>(
        `select sum(s.calls)::text as calls, sum(s.plans)::text as plans, sum(s.total_exec_time) as exec,
                sum(s.total_plan_time) as plan
           from pg_stat_statements s join pg_database d on d.oid = s.dbid
          where d.datname = $1 and ltrim(s.query) like $2`,
        [name, pattern],
      );
      const calls = Number(rows[0]?.calls ?? 0);
      if (calls > 0)
        statements[kind] = {
          calls,
          execMs: rows[0]!.exec / calls,
          planMs: rows[0]!.plan / calls,
          plansPerCall: Number(rows[0]!.plans) / calls,
        };
    }
    const { rows } = await c.query<Record<keyof WalFlushes, string>>(
      `select wal_records::text as records, wal_write::text as writes, wal_sync::text as syncs,
              wal_write_time::text as "writeMs", wal_sync_time::text as "syncMs" from pg_stat_wal`,
    );
    const w = rows[0]!;
    return {
      statements,
      wal: {
        records: Number(w.records),
        writes: Number(w.writes),
        syncs: Number(w.syncs),
        writeMs: Number(w.writeMs),
        syncMs: Number(w.syncMs),
      },
    };
  });
}
