import { labelStatement } from './label-statement.ts';
import { withPgClient } from './with-pg-client.ts';

/** pg_stat_statements rows of one database that share a {@link labelStatement} label. */
export interface StatementGroup {
  readonly label: string;
  readonly calls: number;
  /** Server-side execution time (pg_stat_statements total_exec_time), summed over the group. */
  readonly execMs: number;
  /** How many distinct normalised statements fell under this label. */
  readonly variants: number;
}

/**
 * Statements executed in database `name` by anyone but `excludeRole` (everyone's when no such role exists), from pg_stat_statements,
 * grouped by label and sorted by calls. Utility statements (BEGIN, COMMIT) are included: the
 * extension tracks them by default.
 */
export async function readStatementStats(
  adminUrl: string,
  name: string,
  excludeRole: string,
): Promise<StatementGroup[]> {
  const rows = await withPgClient(adminUrl, async (c) => {
    const result = await c.query<{ query: string; calls: string; total_exec_time: number }>(
      `select s.query, s.calls::text, s.total_exec_time
         from pg_stat_statements s
         join pg_database d on d.oid = s.dbid
        where d.datname = $1
          and s.userid is distinct from (select oid from pg_roles where rolname = $2)`,
      [name, excludeRole],
    );
    return result.rows;
  });
  const groups = new Map<string, { calls: number; execMs: number; variants: number }>();
  for (const row of rows) {
    const label = labelStatement(row.query);
    const group = groups.get(label) ?? { calls: 0, execMs: 0, variants: 0 };
    group.calls += Number(row.calls);
    group.execMs += row.total_exec_time;
    group.variants += 1;
    groups.set(label, group);
  }
  return [...groups].map(([label, g]) => ({ label, ...g })).sort((a, b) => b.calls - a.calls);
}

/** Forgets database `name`'s statements (after a warm-up), leaving other databases' rows alone. */
export async function resetStatementStats(adminUrl: string, name: string): Promise<void> {
  await withPgClient(adminUrl, async (c) => {
    await c.query('select pg_stat_statements_reset(0, (select oid from pg_database where datname = $1), 0)', [name]);
  });
}
