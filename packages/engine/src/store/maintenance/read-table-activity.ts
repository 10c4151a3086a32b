import type { SqlSession } from '../../db/database.ts';

/** What PostgreSQL's statistics say about one engine table: the inputs of autovacuum's rules. */
export interface TableActivity {
  table: string;
  /** Row versions dead since the last vacuum (updated or deleted rows still on their pages). */
  deadTuples: number;
  /** Rows inserted, updated or deleted since the last analyze. */
  modifiedSinceAnalyze: number;
  /** The planner's row count from the last vacuum or analyze; -1 when the table was never analyzed. */
  reltuples: number;
  /** The table's main fork on disk: a never-analyzed table with pages holds rows the planner does not know about. */
  bytes: number;
}

/**
 * Reads the activity counters of every table in the engine's `sagaflow` schema, in one statement,
 * after the process's own counters were flushed to them.
 * `pg_relation_size` is read beside the counters because they start from zero when the database
 * was not shut down cleanly, while a table's pages stay: a never-analyzed table is still found.
 */
export async function readTableActivity(session: SqlSession): Promise<TableActivity[]> {
  // A backend sends its counters to the statistics at most once a second: up to a second of the
  // process's own writes is not in them yet, and in PGlite's single session they are all its own.
  // Forced, the flush happens once this statement is done, before the read below.
  await session.query('select pg_stat_force_next_flush()');
  const rows = await session.query<{
    table: string;
    dead_tuples: string;
    modified_since_analyze: string;
    reltuples: number;
    bytes: string;
  }>(
    `select s.relname as table, s.n_dead_tup::text as dead_tuples,
            s.n_mod_since_analyze::text as modified_since_analyze,
            c.reltuples::float8 as reltuples, pg_relation_size(s.relid)::text as bytes
       from pg_stat_user_tables s
       join pg_class c on c.oid = s.relid
      where s.schemaname = 'sagaflow'
      order by s.relname`,
  );
  return rows.map((r) => ({
    table: r.table,
    deadTuples: Number(r.dead_tuples),
    modifiedSinceAnalyze: Number(r.modified_since_analyze),
    reltuples: Number(r.reltuples),
    bytes: Number(r.bytes),
  }));
}
