import type { Json } from '../definitions/define-action.ts';
import { Prisma } from '../generated/prisma/client.ts';
import type { RawDb } from '../db/raw-db.ts';
import { runEndEvents } from './append-run-end.ts';
import type { JobAck } from './delete-job.ts';
import { finishedRunSet, type FinalRunStatus } from './finish-run.ts';
import { openRunStatusesSql } from './step-table.ts';
import { stepEventRows } from './step-event.ts';
import { fencedOutcomeCte, type TransitionOutcome } from './step-transition.ts';

/**
 * A top-level run's finish in ONE autocommitted statement (ADR 0042): what the finishing transaction
 * does with lockOpenRun FOR UPDATE, recordStepOutcome, finishRun and appendRunEnd. The run's row is
 * locked FOR UPDATE (waiting for every claim, outcome and park holding it), the last step's outcome is
 * recorded under recordStepOutcome's fence, the run is finished by finishRun's compare-and-swap (the
 * row decides: an expired run ends Expired), then a stuck episode's `run.unstuck`, the terminal event
 * and the job's acknowledgement. Nothing is written unless the outcome (if any) and the finish both
 * happen. The last stuck event is read from the statement's snapshot, taken before the lock: so the
 * gate also requires the locked row to be the version that snapshot saw (same xmin). A run row that
 * changed while the statement waited (a park, a stuck mark, an expiry) closes the gate, and the
 * caller's transaction, whose later statements see the newest events, finishes the run instead.
 * A child run is never finished here (its parent's step is settled by the same transaction).
 * Returns the status written, or null when the statement wrote nothing.
 */
export async function finishTopRun(
  db: RawDb,
  args: {
    runId: string;
    status: FinalRunStatus;
    output?: Json;
    error?: Json;
    data: Record<string, Json>;
    now: Date;
    outcome?: TransitionOutcome;
    ack?: Pick<JobAck, 'id' | 'workerId'>;
  },
): Promise<FinalRunStatus | null> {
  const { outcome, ack } = args;
  const recorded = outcome ? fencedOutcomeCte(outcome, args.now) : Prisma.empty;
  const outcomeEvent = outcome
    ? Prisma.sql`select 0 as ord, o.* from (${stepEventRows(outcome.event, 'upd')}) o
         where exists (select 1 from fin) union all `
    : Prisma.empty;
  const acknowledge = ack
    ? Prisma.sql`, ack as (
      delete from "sagaflow"."jobs"
       where id = ${ack.id}::bigint and locked_by = ${ack.workerId} and exists (select 1 from fin))`
    : Prisma.empty;
  const rows = await db.$queryRaw<{ status: FinalRunStatus }[]>(Prisma.sql`
    with seen as (
      select r.xmin::text as version from "sagaflow"."flow_runs" r where r.id = ${args.runId}::uuid
    ), run as (
      select r.id from "sagaflow"."flow_runs" r
       where r.id = ${args.runId}::uuid and r.status in ${openRunStatusesSql} and r.parent_run_id is null
         and r.xmin::text = (select version from seen)
         for update
    )${recorded}, fin as (
      update "sagaflow"."flow_runs"
         set ${finishedRunSet(args)}
       where id = (select id from run) and status in ${openRunStatusesSql}
         ${outcome ? Prisma.sql`and exists (select 1 from upd)` : Prisma.empty}
      returning id, status
    ), events as (
      insert into "sagaflow"."flow_events" (run_id, type, sequence, row_id, data)
      select e.run_id, e.type, e.sequence, e.row_id, e.data from (
        ${outcomeEvent}
        select end_.ord, f.id as run_id, end_.type, null::int as sequence, null::uuid as row_id, end_.data
          from fin f, (${runEndEvents(args.runId, Prisma.sql`('run.' || lower((select status from fin)))`, args.data)}) end_
      ) e order by e.ord
    )${acknowledge}
    select status from fin`);
  return rows[0]?.status ?? null;
}
