import type { Db } from './types.ts';

export async function findRun(db: Db, id: string) {
  return db.flowRun.findUnique({ where: { id } });
}
export type DbFlowRun = NonNullable<Awaited<ReturnType<typeof findRun>>>;
