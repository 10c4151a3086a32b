import type { Db } from './types.ts';

/** Unpublished outbox rows due now: the publisher's "rows left", an index-only count on (status, available_at). */
export async function countDueOutbox(db: Db, args: { now: Date }): Promise<number> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    select count(*)::int as n from "sagaflow"."outbox" where status = 'Pending' and available_at <= ${args.now}::timestamptz`;
  return rows[0]?.n ?? 0;
}
