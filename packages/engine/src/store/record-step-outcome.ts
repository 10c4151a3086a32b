import type { Json } from '../definitions/define-action.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { tableSql, type StepTable } from './step-table.ts';
import { stepEventCte, type StepEvent } from './step-event.ts';
import type { RawDb } from '../db/raw-db.ts';
import { openRunByKey, statusIn } from './keyed-status.ts';

export type StepOutcome =
  | { kind: 'completed'; output: Json }
  | { kind: 'failed'; error: Json; retryAt: Date }
  | { kind: 'errored'; error: Json };

/**
 * Records an outcome only if the row is still Running under the attempts value our claim produced
 * and its run is still open, serialized with the run's terminal transition (the run row is locked
 * FOR KEY SHARE, see lockOpenRun): an outcome never commits after the terminal event. `rejected`: the row changed hands or was settled without a claim (a
 * recorded terminal state is never overwritten). `refused`: the run has finished.
 */
export async function recordStepOutcome(
  db: RawDb,
  args: {
    table: StepTable;
    id: string;
    attempts: number;
    outcome: StepOutcome;
    now: Date;
    /** The history row of a recorded outcome, appended by the same statement. */
    event?: StepEvent;
  },
): Promise<'recorded' | 'rejected' | 'refused'> {
  const rows = await db.$queryRaw<{ run_open: boolean; updated: boolean }[]>(Prisma.sql`
    with step as (
      select s.id, s.run_id from ${tableSql(args.table)} s where s.id = ${args.id}::uuid
    ), run as (
      select r.id from "sagaflow"."flow_runs" r
       where r.id = (select run_id from step) and ${openRunByKey('r.status')}
         for key share
    ), target as (
      select s.id, exists (select 1 from run) as run_open from step s
    ), upd as (
      update ${tableSql(args.table)} s
         set ${outcomeSet(args.outcome, args.now)}
        from target t
       where s.id = t.id and t.run_open and s.attempts = ${args.attempts}::int and ${statusIn('s.status', ['Running'])}
      returning s.id, s.run_id, s.attempts)${stepEventCte(args.event, 'upd')}
    select t.run_open, exists (select 1 from upd) as updated from target t`);
  const r = rows[0];
  if (r?.updated) return 'recorded';
  return r && !r.run_open ? 'refused' : 'rejected';
}

/**
 * The SET list of a recorded outcome (status, value, retry time, clearing the reclaim deadline), for
 * an UPDATE of a step table aliased `s`: shared with the fused step transition and finish
 * (step-transition.ts, finish-top-run.ts), so every outcome is written alike.
 */
export function outcomeSet(outcome: StepOutcome, now: Date): Prisma.Sql {
  const status = outcome.kind === 'completed' ? 'Completed' : outcome.kind === 'failed' ? 'Failed' : 'Errored';
  const output = outcome.kind === 'completed' ? JSON.stringify(outcome.output) : null;
  const error = outcome.kind === 'completed' ? null : JSON.stringify(outcome.error);
  const retryAt = outcome.kind === 'failed' ? outcome.retryAt : null;
  return Prisma.sql`status = ${status},
             output = ${output}::jsonb,
             error = ${error}::jsonb,
             available_at = coalesce(${retryAt}::timestamptz, s.available_at),
             reclaim_stale_at = null,
             updated_at = ${now}::timestamptz,
             finished_at = case when ${status} = 'Failed' then null else ${now}::timestamptz end`;
}
