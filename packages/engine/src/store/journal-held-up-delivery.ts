import type { PrismaClient } from '../generated/prisma/client.ts';
import { lockWaitMs } from '../process/process-deps.ts';

/** How often a held instance's refused deliveries are journaled again, at most: one entry per window. */
export const heldUpJournalWindowSeconds = 60;

/**
 * A delivery to an instance another session holds gave up (ADR 0131 §4: nothing written, no failure
 * recorded, the sender delivers it again). It is journaled as a `process_delivery_held_up` anomaly
 * naming the instance (or, while another session is still creating it, its process and key), the
 * message and what to do, so an instance whose messages keep bouncing is visible where on-call looks,
 * not only in a warn log (ADR 0132). One entry per process and key per
 * {@link heldUpJournalWindowSeconds} at most, however often and from however many replicas a broker
 * redelivers: the check and the insert run under one transaction-scoped advisory lock on the key
 * (review 56). The instance is read without a row lock (a plain read never waits on the session that
 * holds it). Returns whether it wrote one.
 */
export async function journalHeldUpDelivery(
  db: PrismaClient,
  args: { processName: string; key: string; messageId: string; messageType: string; limitMs: number },
): Promise<boolean> {
  const waitMs = lockWaitMs(args.limitMs);
  const [, written] = await db.$transaction([
    db.$queryRaw`select 1 as locked from (select pg_advisory_xact_lock(hashtext('sagaflow.held_up'), hashtext(${args.processName} || '/' || ${args.key}))) l`,
    db.$executeRaw`
      insert into "sagaflow"."anomaly_log" (code, row_id, name, site, message, details)
      select 'process_delivery_held_up', i.id, k.process_name, 'saga_instances',
             'messages to ' || coalesce('instance ' || i.id::text || ' (process ' || k.process_name || ')',
                                        'process ' || k.process_name || ', key ' || left(k.key, 200) || ' (its instance is being created by another session)')
               || ' are not landing: another session has held it past ' || ${String(waitMs)} || ' ms (half of processes.transaction_timeout_ms); '
               || 'nothing was written and no failure recorded; its sender delivers them again. '
               || 'Find the session holding it (an open transaction: pg_stat_activity, state ''idle in transaction'') and end it',
             jsonb_build_object('instanceId', i.id::text, 'processName', k.process_name, 'key', k.key,
                                'messageId', ${args.messageId}::text, 'messageType', ${args.messageType}::text,
                                'lockWaitMs', ${waitMs}::int)
        from (select ${args.processName}::text as process_name, ${args.key}::text as key) k
        left join "sagaflow"."saga_instances" i on i.process_name = k.process_name and i.correlation_key = k.key
       where not exists (
         select 1 from "sagaflow"."anomaly_log" a
          where a.code = 'process_delivery_held_up'
            and a.at > now() - make_interval(secs => ${heldUpJournalWindowSeconds}::int)
            and a.details->>'processName' = k.process_name and a.details->>'key' = k.key)`,
  ]);
  return written > 0;
}
