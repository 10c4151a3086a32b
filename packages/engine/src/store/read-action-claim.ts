import type { Db } from './types.ts';

/** Reads a claim back after its transaction closed: what the row actually holds. */
export async function readActionClaim(db: Db, id: string): Promise<{ attempts: number; status: string } | null> {
  return db.actionRun.findUnique({ where: { id }, select: { attempts: true, status: true } });
}
