import { Prisma } from '../generated/prisma/client.ts';
import { openRunStatusesSql, tableSql, type StepTable } from './step-table.ts';
import type { Db } from './types.ts';

/**
 * Reads a claim back after its transaction closed: what the row actually holds, and whether its run
 * is still open (a terminate that committed right after the claim means the step must not start).
 */
export async function readStepClaim(
  db: Db,
  table: StepTable,
  id: string,
): Promise<{ attempts: number; status: string; runOpen: boolean } | null> {
  const rows = await db.$queryRaw<{ attempts: number; status: string; runOpen: boolean }[]>(
    Prisma.sql`select s.attempts, s.status, r.status in ${openRunStatusesSql} as "runOpen"
                 from ${tableSql(table)} s join "sagaflow"."flow_runs" r on r.id = s.run_id
                where s.id = ${id}::uuid`,
  );
  return rows[0] ?? null;
}
