import type { Db } from './types.ts';

/** How often a held instance's refused deliveries are journaled again, at most: one entry per window. */
export const heldUpJournalWindowSeconds = 60;

/**
 * A delivery to an instance another session holds gave up (ADR 0131 §4: nothing written, no failure
 * recorded, the sender delivers it again). It is journaled as a `process_delivery_held_up` anomaly
 * naming the instance, the message and what to do, so an instance whose messages keep bouncing is
 * visible where on-call looks, not only in a warn log (review 55). One entry per instance per
 * {@link heldUpJournalWindowSeconds} at most, however often a broker redelivers. The instance is read
 * without a lock (a plain read never waits on the session that holds it). Returns whether it wrote one.
 */
export async function journalHeldUpDelivery(
  db: Db,
  args: { processName: string; key: string; messageId: string; messageType: string; limitMs: number },
): Promise<boolean> {
  const waitMs = Math.max(50, Math.floor(args.limitMs / 2));
  const n = await db.$executeRaw`
    insert into "sagaflow"."anomaly_log" (code, row_id, name, site, message, details)
    select 'process_delivery_held_up', i.id, ${args.processName}, 'saga_instances',
           'messages to instance ' || i.id::text || ' (process ' || ${args.processName} || ') are not landing: '
             || 'another session has held its row past ' || ${String(waitMs)} || ' ms (half of processes.transaction_timeout_ms); '
             || 'nothing was written and no failure recorded; its sender delivers them again. '
             || 'Find the session holding it (an open transaction: pg_stat_activity, state ''idle in transaction'') and end it',
           jsonb_build_object('instanceId', i.id::text, 'processName', i.process_name, 'messageId', ${args.messageId}::text,
                              'messageType', ${args.messageType}::text, 'lockWaitMs', ${waitMs}::int)
      from "sagaflow"."saga_instances" i
     where i.process_name = ${args.processName} and i.correlation_key = ${args.key}
       and not exists (
         select 1 from "sagaflow"."anomaly_log" a
          where a.code = 'process_delivery_held_up' and a.row_id = i.id
            and a.at > now() - make_interval(secs => ${heldUpJournalWindowSeconds}::int))`;
  return n > 0;
}
