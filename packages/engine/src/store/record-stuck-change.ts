import { Prisma } from '../generated/prisma/client.ts';
import type { RawDb } from '../db/raw-db.ts';

/**
 * The run's last `run.stuck` or `run.unstuck` event (type, data), as a lateral subquery: what a
 * stuck episode's opening or closing is decided against. Read it after the run's row lock is held.
 */
export function lastStuckEvent(runId: string): Prisma.Sql {
  return Prisma.sql`(
        select e.type, e.data from "sagaflow"."flow_events" e
         where e.run_id = ${runId}::uuid and e.type in ('run.stuck', 'run.unstuck')
         order by e.id desc limit 1)`;
}

/**
 * Writes the run's stuck state into its history when it changes: `run.stuck` {reason} when a reason
 * is set and the run's last stuck event is not a `run.stuck` for the same kind of reason (the text
 * before the first ':', so `expiry_failed` with a new attempt count is not a new episode), and
 * `run.unstuck` {reason, by} when the reason is cleared while a `run.stuck` is the last one. So each
 * stuck episode appears once, and is closed once, whatever the column went through in between (a
 * replay clears it while it runs). Call it in the transaction that set or cleared `stuck_reason`,
 * AFTER that write: the run's row lock is then held, and this statement's snapshot sees every
 * earlier writer's events. Returns the event written, if any.
 */
export async function recordStuckChange(
  db: RawDb,
  args: { runId: string; reason: string | null; by: string },
): Promise<'run.stuck' | 'run.unstuck' | null> {
  const rows = await db.$queryRaw<{ type: 'run.stuck' | 'run.unstuck' }[]>`
    insert into "sagaflow"."flow_events" (run_id, type, data)
    select ${args.runId}::uuid,
           case when ${args.reason}::text is null then 'run.unstuck' else 'run.stuck' end,
           case when ${args.reason}::text is null
                then jsonb_build_object('reason', last.data->>'reason', 'by', ${args.by}::text)
                else jsonb_build_object('reason', ${args.reason}::text) end
      from (select 1) one
      left join lateral ${lastStuckEvent(args.runId)} last on true
     where case when ${args.reason}::text is null then last.type is not distinct from 'run.stuck'
                else last.type is distinct from 'run.stuck'
                     or split_part(last.data->>'reason', ':', 1) <> split_part(${args.reason}::text, ':', 1) end
    returning type`;
  return rows[0]?.type ?? null;
}
