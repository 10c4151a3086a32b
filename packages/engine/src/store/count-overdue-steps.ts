import { Prisma } from '../generated/prisma/client.ts';
import { openStepStatusesSql } from './expire-overdue-steps.ts';
import { tableSql, type StepTable } from './step-table.ts';
import type { Db } from './types.ts';

/**
 * How many steps are overdue and still open: the step sweep's "rows left", counted through the same
 * partial index it sweeps by (an index-only count of the backlog, not of the table).
 */
export async function countOverdueSteps(db: Db, args: { table: StepTable; now: Date }): Promise<number> {
  const rows = await db.$queryRaw<{ n: number }[]>(Prisma.sql`
    select count(*)::int as n from ${tableSql(args.table)}
     where expires_at is not null and expires_at <= ${args.now}::timestamptz and status in ${openStepStatusesSql}`);
  return rows[0]?.n ?? 0;
}
