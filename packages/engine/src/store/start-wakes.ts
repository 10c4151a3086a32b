/**
 * The `wakes` CTE of a start's statement ({@link insertStartedRunsStatement} and
 * {@link insertStartedRunsWithStepStatement}): per run, in the items' order, its first wake (due at
 * the start's `now`, leased to the start's worker when it has one) and, with a run timeout, the
 * backstop's wake; it returns each wake's id, run and holder, so the statement can hand the leased
 * one back. One text for both statements, so a change to how a start queues its wakes is made once.
 * `rows` names the CTE or input the runs' columns come from, with its alias (`input i`, `fresh f`);
 * `firstDeliveries` is the first wake's `deliveries` expression, as the statement has it, spacing
 * included (the texts are prepared by name: ADR 0043).
 */
export function startWakes(rows: { from: string; alias: string }, firstDeliveries: string): string {
  const a = rows.alias;
  const joined = `from run r join ${rows.from} ${a} on ${a}.id = r.id`;
  return `wakes as (
      insert into "sagaflow"."jobs" (kind, run_id, available_at, locked_by, locked_until, deliveries)
      select 'wake-run', w.run_id, w.available_at, w.locked_by, w.locked_until, w.deliveries from (
        select ${a}.k, 1 as ord, r.id as run_id, ${a}.now as available_at, ${a}.locked_by, ${a}.locked_until,${firstDeliveries} as deliveries
          ${joined}
        union all
        select ${a}.k, 2, r.id, ${a}.run_timeout_at, null, null, 0
          ${joined}
         where ${a}.run_timeout_at is not null
      ) w
       order by w.k, w.ord
      returning id, run_id, locked_by
    )`;
}
