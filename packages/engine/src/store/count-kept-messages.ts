import type { Db } from './types.ts';

/**
 * How many messages a quarantined instance kept and has not applied yet (what a release applies after the
 * message it stopped on, {@link listSkippedMessages}), counted by the instance's id alone: its consumer is
 * its process; and the size of its stored state in bytes, which each of them reads and writes again.
 * Zeros for an instance that is not there.
 */
export async function countKeptMessages(db: Db, instanceId: string): Promise<{ kept: number; stateBytes: number }> {
  const rows = await db.$queryRaw<{ kept: number; state_bytes: number }[]>`
    select (select count(distinct t.message_id)::int
              from "sagaflow"."process_transitions" t
             where t.instance_id = s.id and t.outcome = 'skipped_quarantined' and t.detail ? 'payload'
               and not exists (select 1 from "sagaflow"."inbox" i
                                where i.consumer = s.process_name and i.message_id = t.message_id)) as kept,
           coalesce(octet_length(s.state::text), 0)::int as state_bytes
      from "sagaflow"."saga_instances" s
     where s.id = ${instanceId}::uuid`;
  return { kept: rows[0]?.kept ?? 0, stateBytes: rows[0]?.state_bytes ?? 0 };
}
