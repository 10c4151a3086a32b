import { Prisma } from '../generated/prisma/client.ts';
import { tableSql, type StepTable } from './step-table.ts';
import type { Db } from './types.ts';

/** Reads a claim back after its transaction closed: what the row actually holds. */
export async function readStepClaim(
  db: Db,
  table: StepTable,
  id: string,
): Promise<{ attempts: number; status: string } | null> {
  const rows = await db.$queryRaw<{ attempts: number; status: string }[]>(
    Prisma.sql`select attempts, status from ${tableSql(table)} where id = ${id}::uuid`,
  );
  return rows[0] ?? null;
}
