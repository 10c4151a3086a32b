import { Prisma } from '../generated/prisma/client.ts';
import { repairCandidatesSql, type RepairCandidatesArgs } from './repair-candidates-sql.ts';
import type { Db } from './types.ts';

/** Candidate rows above `after`: the doctor's "rows left" when a pass stops on its time budget. */
export async function countRepairCandidates(db: Db, args: Omit<RepairCandidatesArgs, 'limit'>): Promise<number> {
  const rows = await db.$queryRaw<{ n: number }[]>(Prisma.sql`
    select count(*)::int as n from (${repairCandidatesSql({ ...args, limit: null })}) c`);
  return rows[0]?.n ?? 0;
}
