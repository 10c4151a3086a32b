import type { Database } from '../db/database.ts';

/** What {@link seedOverdueSteps} wrote. */
export interface OverdueStepsSeed {
  /** The open step whose deadline has not come: a sweep must leave it alone. */
  notOverdueStepId: string;
}

/**
 * Seeds a step sweep's backlog with set-based SQL (one statement per kind of row, no engine calls):
 * `overdue` Waiting runs, each with one Pending action whose deadline passed at `overdueAt`;
 * `finished` Completed runs whose Completed action's deadline passed too (the history a sweep must not
 * read); one open step due a day after `overdueAt`. Shared by the backlog test and the sweeps bench.
 */
export async function seedOverdueSteps(
  db: Pick<Database, 'prisma'>,
  args: { flowName: string; overdue: number; finished: number; overdueAt: Date },
): Promise<OverdueStepsSeed> {
  const later = new Date(args.overdueAt.getTime() + 86_400_000);
  const seed = async (n: number, runStatus: string, stepStatus: string, expiresAt: Date) =>
    db.prisma.$queryRaw<{ id: string }[]>`
      with runs as (
        insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, created_at, updated_at)
        select ${args.flowName}, 1, ${runStatus}, '{}'::jsonb, ${args.overdueAt}::timestamptz, ${args.overdueAt}::timestamptz
          from generate_series(1, ${n}::int)
        returning id
      )
      insert into "sagaflow"."action_runs" (run_id, sequence, kind, name, status, input, expires_at, created_at, updated_at)
      select id, 1, 'action', 'sweep-seeded', ${stepStatus}, '{}'::jsonb, ${expiresAt}::timestamptz,
             ${args.overdueAt}::timestamptz, ${args.overdueAt}::timestamptz
        from runs
      returning id::text as id`;
  await seed(args.overdue, 'Waiting', 'Pending', args.overdueAt);
  await seed(args.finished, 'Completed', 'Completed', args.overdueAt);
  const [open] = await seed(1, 'Waiting', 'Pending', later);
  if (!open) throw new Error('seedOverdueSteps: the not-overdue step was not written');
  return { notOverdueStepId: open.id };
}

/**
 * Seeds the doctor's backlog: `lost` open runs whose job is gone, half still Pending since before
 * `createdAt` (R1), half Waiting on a timer that fell due then (R2); no jobs for any of them.
 */
export async function seedLostRuns(
  db: Pick<Database, 'prisma'>,
  args: { flowName: string; lost: number; createdAt: Date },
): Promise<void> {
  const pending = Math.ceil(args.lost / 2);
  await db.prisma.$executeRaw`
    insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, created_at, updated_at)
    select ${args.flowName}, 1, 'Pending', '{}'::jsonb, ${args.createdAt}::timestamptz, ${args.createdAt}::timestamptz
      from generate_series(1, ${pending}::int)`;
  await db.prisma.$executeRaw`
    with runs as (
      insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, created_at, updated_at)
      select ${args.flowName}, 1, 'Waiting', '{}'::jsonb, ${args.createdAt}::timestamptz, ${args.createdAt}::timestamptz
        from generate_series(1, ${args.lost - pending}::int)
      returning id
    )
    insert into "sagaflow"."action_runs" (run_id, sequence, kind, name, status, input, wake_at, created_at, updated_at)
    select id, 1, 'timer', 'sweep-seeded-timer', 'Waiting', '{}'::jsonb, ${args.createdAt}::timestamptz,
           ${args.createdAt}::timestamptz, ${args.createdAt}::timestamptz
      from runs`;
}
