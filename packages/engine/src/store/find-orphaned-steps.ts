import { Prisma } from '../generated/prisma/client.ts';
import { openRunStatusesSql, tableSql } from './step-table.ts';
import type { Db } from './types.ts';

/** A step Running with no reclaim deadline, held by a worker that is gone: nothing will ever finish it. */
export interface OrphanedStep {
  table: 'action_runs' | 'compensation_runs';
  id: string;
  run_id: string;
  sequence: number;
  name: string;
  attempts: number;
  claimed_by: string;
  gone_since: Date;
  stuck_reason: string | null;
}

/**
 * Steps (actions and compensations) Running with no reclaim deadline in open runs whose owner is
 * gone: its `workers` row says it stopped, or its last heartbeat (database clock) is older than
 * `deadAfterSeconds`, or it has no row at all and the step was claimed more than `deadAfterSeconds`
 * ago (a pool runs steps before its first beat lands; one killed before then never got a row, review 53).
 * `runId`/`rowId` narrow it to one run or one row; `unmarkedOnly` skips runs that already have a
 * stuck reason (the monitor's page then never fills up with runs it has already marked).
 */
/**
 * Is the owner of step row `s` (its `workers` row joined as `w`, null when it has none) gone? Stopped,
 * silent for `deadAfterSeconds` (database clock), or never registered and the step claimed (its
 * `updated_at`, set by the claim) that long ago. Shared by the monitor, the reclaim check and the
 * clearing of an `owner_gone` reason (ADR 0010 addendum, ADR 0124).
 */
export function ownerGoneSql(deadAfterSeconds: number): Prisma.Sql {
  const dead = Prisma.sql`now() - make_interval(secs => ${deadAfterSeconds}::int)`;
  return Prisma.sql`(case when w.id is null then s.updated_at < ${dead}
                          else w.stopped_at is not null or w.heartbeat_at < ${dead} end)`;
}

export async function findOrphanedSteps(
  db: Db,
  args: {
    deadAfterSeconds: number;
    runId?: string;
    rowId?: string;
    unmarkedOnly?: boolean;
    /** Only runs whose repair budget is not spent (`repair_count` below it): the doctor's R4 (review 62). */
    repairBudget?: number;
    limit: number;
  },
): Promise<OrphanedStep[]> {
  const run = args.runId ? Prisma.sql`and s.run_id = ${args.runId}::uuid` : Prisma.empty;
  const row = args.rowId ? Prisma.sql`and s.id = ${args.rowId}::uuid` : Prisma.empty;
  const unmarked = args.unmarkedOnly ? Prisma.sql`and r.stuck_reason is null` : Prisma.empty;
  const budget =
    args.repairBudget === undefined ? Prisma.empty : Prisma.sql`and r.repair_count < ${args.repairBudget}::int`;
  const gone = ownerGoneSql(args.deadAfterSeconds);
  const select = (table: 'action_runs' | 'compensation_runs', sequence: Prisma.Sql) => Prisma.sql`
    select ${table} as "table", s.id::text as id, s.run_id::text as run_id, ${sequence} as sequence, s.name,
           s.attempts, s.claimed_by, coalesce(w.stopped_at, w.heartbeat_at, s.updated_at) as gone_since, r.stuck_reason
      from ${tableSql(table)} s
      left join "sagaflow"."workers" w on w.id = s.claimed_by
      join "sagaflow"."flow_runs" r on r.id = s.run_id and r.status in ${openRunStatusesSql}
     where s.status = 'Running' and s.reclaim_stale_at is null and ${gone} ${run} ${row} ${unmarked} ${budget}`;
  return db.$queryRaw<OrphanedStep[]>(Prisma.sql`
    ${select('action_runs', Prisma.sql`s.sequence`)}
    union all
    ${select('compensation_runs', Prisma.sql`s.action_sequence`)}
    order by gone_since
    limit ${args.limit}::int`);
}
