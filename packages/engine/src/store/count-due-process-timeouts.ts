import type { Db } from './types.ts';

/**
 * Due timeouts the scheduler could claim now (armed, due or due for a retry, instance not
 * quarantined): its "rows left", read through the partial index on armed timers (migration 0015),
 * up to now only (the same bound as claimDueProcessTimeout's).
 */
export async function countDueProcessTimeouts(
  db: Db,
  args: { now: Date; processNames: readonly string[] },
): Promise<number> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    select count(*)::int as n
      from "sagaflow"."process_timeouts" t
      join "sagaflow"."saga_instances" i on i.id = t.instance_id
     where t.status = 'Pending'
       and t.due_at <= ${args.now}::timestamptz
       and coalesce(t.retry_at, t.due_at) <= ${args.now}::timestamptz
       and i.status <> 'QUARANTINED'
       and i.process_name = any(${args.processNames}::text[])`;
  return rows[0]?.n ?? 0;
}
