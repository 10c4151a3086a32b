import type { Db } from './types.ts';

/**
 * How many messages a quarantined instance kept and has not applied yet (what a release applies after the
 * message it stopped on, {@link listSkippedMessages}), counted by the instance's id alone: its consumer is
 * its process. 0 for an instance that is not there.
 */
export async function countKeptMessages(db: Db, instanceId: string): Promise<number> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    select count(distinct t.message_id)::int as n
      from "sagaflow"."saga_instances" s
      join "sagaflow"."process_transitions" t on t.instance_id = s.id
     where s.id = ${instanceId}::uuid and t.outcome = 'skipped_quarantined' and t.detail ? 'payload'
       and not exists (select 1 from "sagaflow"."inbox" i
                        where i.consumer = s.process_name and i.message_id = t.message_id)`;
  return rows[0]?.n ?? 0;
}
