import type { Json } from '../definitions/define-action.ts';
import { Prisma } from '../generated/prisma/client.ts';
import type { JobAck } from './delete-job.ts';
import { lastStuckEvent } from './record-stuck-change.ts';
import type { RawDb } from '../db/raw-db.ts';

/**
 * What follows a run's terminal transition ({@link finishRun}), in ONE statement instead of three:
 * the `run.unstuck` closing a stuck episode the run ended in (by `type`), then the terminal event
 * `type` with `data`, in that order of ids, and the acknowledgement of the job the finishing replay
 * runs under (ADR 0029 decision 6), when there is one. Call it in the finishing transaction, after
 * finishRun: the run's row lock is then held, so this statement's snapshot sees every earlier
 * writer's stuck events (the rule of recordStuckChange).
 */
export async function appendRunEnd(
  db: RawDb,
  args: { runId: string; type: string; data: Record<string, Json>; ack?: Pick<JobAck, 'id' | 'workerId'> },
): Promise<void> {
  const ack = args.ack
    ? Prisma.sql`, ack as (
      delete from "sagaflow"."jobs" where id = ${args.ack.id}::bigint and locked_by = ${args.ack.workerId})`
    : Prisma.empty;
  await db.$executeRaw(Prisma.sql`
    with ended as (${runEndEvents(args.runId, Prisma.sql`${args.type}::text`, args.data)})${ack}
    insert into "sagaflow"."flow_events" (run_id, type, data)
    select ${args.runId}::uuid, e.type, e.data from ended e order by e.ord`);
}

/**
 * The events that follow a run's terminal transition, as a SELECT of (ord, type, data) in order: a
 * `run.unstuck` closing a stuck episode the run ended in, then the terminal event `type`. Read it
 * only where the run's row lock was taken before the statement's snapshot, or checked not to have
 * moved since (finish-top-run.ts): the last stuck event must be the newest one.
 */
export function runEndEvents(runId: string, type: Prisma.Sql, data: Record<string, Json>): Prisma.Sql {
  return Prisma.sql`
      select 1 as ord, 'run.unstuck' as type,
             jsonb_build_object('reason', last.data->>'reason', 'by', ${type}) as data
        from ${lastStuckEvent(runId)} last
       where last.type = 'run.stuck'
      union all
      select 2, ${type}, ${JSON.stringify(data)}::jsonb`;
}
