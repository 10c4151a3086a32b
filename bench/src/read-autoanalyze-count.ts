import { withPgClient } from './with-pg-client.ts';

/**
 * How many tables autovacuum has analyzed so far, cluster-wide: `autoanalyze_count` summed over every
 * database that takes connections (each database's own tables, and the shared catalogs, which every
 * database shows, once). Each autoanalyze is a transaction of its own that writes `pg_statistic`, so
 * it takes a transaction id, and a phase's cluster-wide transaction-id delta counts it whichever
 * database it ran in (an earlier phase's, a template). A counter, never timed.
 */
export async function readAutoanalyzeCount(adminUrl: string): Promise<number> {
  const names = await withPgClient(adminUrl, async (c) => {
    const { rows } = await c.query<{ datname: string }>('select datname from pg_database where datallowconn');
    return rows.map((r) => r.datname);
  });
  let total = 0;
  for (const [n, name] of names.entries()) {
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const { own, shared } = await withPgClient(url.toString(), async (c) => {
      const { rows } = await c.query<{ own: number; shared: number }>(
        `select coalesce(sum(s.autoanalyze_count) filter (where not c.relisshared), 0)::int as own,
                coalesce(sum(s.autoanalyze_count) filter (where c.relisshared), 0)::int as shared
           from pg_stat_all_tables s join pg_class c on c.oid = s.relid`,
      );
      return rows[0] ?? { own: 0, shared: 0 };
    });
    total += own + (n === 0 ? shared : 0);
  }
  return total;
}
