import { withPgClient } from './with-pg-client.ts';

/**
 * How many transactions with an id in [`fromXid`, `toXid`) wrote planner statistics, cluster-wide:
 * the distinct `xmin` of `pg_statistic` rows in that range, over every database that takes
 * connections. An ANALYZE (the bench's after a warm-up, ADR 0051, or autovacuum's, one table a
 * transaction, in any database: an earlier phase's, a template) takes a transaction id only to write
 * those rows, so this counts exactly the ids of a phase that were analyzes, and no system's own
 * writes (no engine, nor DBOS, writes `pg_statistic`). An analyze that found no rows writes none and
 * takes no id; a table analyzed twice in the range counts once (its rows were rewritten): none of
 * that shifts the count by more than the second analyze. Ids are 32-bit in `xmin`: fine on a
 * throwaway cluster far from wraparound.
 */
export async function readStatisticsWriters(adminUrl: string, fromXid: number, toXid: number): Promise<number> {
  const names = await withPgClient(adminUrl, async (c) => {
    const { rows } = await c.query<{ datname: string }>('select datname from pg_database where datallowconn');
    return rows.map((r) => r.datname);
  });
  let total = 0;
  for (const name of names) {
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    total += await withPgClient(url.toString(), async (c) => {
      const { rows } = await c.query<{ n: number }>(
        `select count(distinct xmin::text)::int as n from pg_statistic
          where xmin::text::bigint >= $1 and xmin::text::bigint < $2`,
        [fromXid, toXid],
      );
      return rows[0]?.n ?? 0;
    });
  }
  return total;
}
