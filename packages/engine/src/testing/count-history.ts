import type { SqlSession } from '../db/database.ts';

/** Rows per tag and table, so a test compares what each cohort had before and after a prune. */
export async function countHistoryByTag(sql: SqlSession): Promise<Record<string, number>> {
  const rows = await sql.query<{ key: string; n: number }>(`
    select 'flow_runs:' || flow_name as key, count(*)::int as n from "sagaflow"."flow_runs" group by 1
    union all select 'action_runs:' || r.flow_name, count(*)::int from "sagaflow"."action_runs" s
      join "sagaflow"."flow_runs" r on r.id = s.run_id group by 1
    union all select 'flow_events:' || r.flow_name, count(*)::int from "sagaflow"."flow_events" s
      join "sagaflow"."flow_runs" r on r.id = s.run_id group by 1
    union all select 'saga_instances:' || process_name, count(*)::int from "sagaflow"."saga_instances" group by 1
    union all select 'process_transitions:' || i.process_name, count(*)::int from "sagaflow"."process_transitions" t
      join "sagaflow"."saga_instances" i on i.id = t.instance_id group by 1
    union all select 'outbox:' || source_id, count(*)::int from "sagaflow"."outbox" group by 1
    union all select 'inbox:' || consumer, count(*)::int from "sagaflow"."inbox" group by 1
    union all select 'repair_commands', count(*)::int from "sagaflow"."repair_commands"
    union all select 'audit_events', count(*)::int from "sagaflow"."audit_events"
    union all select 'anomaly_log', count(*)::int from "sagaflow"."anomaly_log"`);
  return Object.fromEntries(rows.map((r) => [r.key, r.n]));
}

/**
 * Rows a run owns that outlived it: a half-deleted run. Always zero (the foreign keys forbid most of
 * it; jobs, which have none, are counted too).
 */
export async function countOrphanRows(sql: SqlSession): Promise<number> {
  const rows = await sql.query<{ n: number }>(`
    select ((select count(*) from "sagaflow"."action_runs" s where not exists (select 1 from "sagaflow"."flow_runs" r where r.id = s.run_id))
          + (select count(*) from "sagaflow"."compensation_runs" s where not exists (select 1 from "sagaflow"."flow_runs" r where r.id = s.run_id))
          + (select count(*) from "sagaflow"."flow_events" s where not exists (select 1 from "sagaflow"."flow_runs" r where r.id = s.run_id))
          + (select count(*) from "sagaflow"."signals" s where not exists (select 1 from "sagaflow"."flow_runs" r where r.id = s.run_id))
          + (select count(*) from "sagaflow"."timers" s where not exists (select 1 from "sagaflow"."flow_runs" r where r.id = s.run_id))
          + (select count(*) from "sagaflow"."jobs" s where s.run_id is not null and not exists (select 1 from "sagaflow"."flow_runs" r where r.id = s.run_id))
          )::int as n`);
  return rows[0]?.n ?? -1;
}
