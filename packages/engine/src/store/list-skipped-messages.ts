import type { Db } from './types.ts';

/**
 * The messages a quarantined instance skipped and kept (their payload is in the history row), in the
 * order they first arrived, not yet in the inbox: what a release applies after the message it stopped on.
 */
export async function listSkippedMessages(
  db: Db,
  args: { instanceId: string; consumer: string },
): Promise<{ messageId: string; messageType: string; payload: unknown; position: bigint | null }[]> {
  const rows = await db.$queryRaw<
    { message_id: string; message_type: string; payload: unknown; position: string | null }[]
  >`
    select s.message_id, s.message_type, s.payload, s.position from (
      select distinct on (t.message_id) t.id, t.message_id, t.message_type, t.detail -> 'payload' as payload,
             t.detail ->> 'position' as position
        from "sagaflow"."process_transitions" t
       where t.instance_id = ${args.instanceId}::uuid and t.outcome = 'skipped_quarantined' and t.detail ? 'payload'
         and not exists (select 1 from "sagaflow"."inbox" i
                          where i.consumer = ${args.consumer} and i.message_id = t.message_id)
       order by t.message_id, t.id) s
     order by s.id`;
  return rows.map((r) => ({
    messageId: r.message_id,
    messageType: r.message_type,
    payload: r.payload,
    position: r.position === null ? null : BigInt(r.position),
  }));
}
