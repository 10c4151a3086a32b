import { Prisma, type PrismaClient } from '../../generated/prisma/client.ts';
import { prunableRunsWhere } from './prunable-sql.ts';
import { noRetentionRows, type RetentionRowCounts } from './retention-tables.ts';

/** Rows one batch of run retention deleted, per table. */
export type DeletedRunRows = Pick<RetentionRowCounts, 'flow_runs' | (typeof ownedTables)[number]>;

/** The tables a run owns, deleted before the run row itself (their foreign keys restrict it). */
const ownedTables = ['action_runs', 'compensation_runs', 'flow_events', 'signals', 'timers', 'jobs'] as const;

/**
 * Deletes up to `limit` prunable runs, oldest finish first, with every row they own, in ONE
 * transaction: a run is gone whole or not at all, so an interrupted prune leaves no half-deleted run.
 * The runs are locked FOR UPDATE SKIP LOCKED: a run a repair (or another pruner) holds is skipped
 * now and taken by a later batch, and a run cannot change under the batch once picked.
 */
export async function deleteFinishedRuns(
  prisma: PrismaClient,
  args: { cutoff: Date; limit: number; timeoutMs: number },
): Promise<DeletedRunRows> {
  return prisma.$transaction(
    async (tx) => {
      const picked = await tx.$queryRaw<{ id: string }[]>`
        select r.id::text as id from "sagaflow"."flow_runs" r
         where ${prunableRunsWhere(args.cutoff)}
         order by r.finished_at
         limit ${args.limit}::int
         for update of r skip locked`;
      const ids = picked.map((r) => r.id);
      const deleted: DeletedRunRows = { ...noRetentionRows() };
      if (ids.length === 0) return deleted;
      for (const table of ownedTables)
        deleted[table] = await tx.$executeRaw`
          delete from "sagaflow".${Prisma.raw(`"${table}"`)} where run_id = any(${ids}::uuid[])`;
      deleted.flow_runs = await tx.$executeRaw`delete from "sagaflow"."flow_runs" where id = any(${ids}::uuid[])`;
      return deleted;
    },
    { timeout: args.timeoutMs, maxWait: args.timeoutMs },
  );
}
