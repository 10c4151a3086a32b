import type { Db } from './types.ts';

/**
 * What an operator command already handled under this message id was: the inbox row's type
 * (`operator:<command>`) and the input its history row (outcome `repair`) kept, when retention has not
 * pruned it. Null when the id was never handled. Read only when a key comes back, to tell the same
 * command (a duplicate) from another one under a reused key (review 39).
 */
export async function findHandledOperatorCommand(
  db: Db,
  args: { consumer: string; messageId: string; instanceId: string },
): Promise<{ messageType: string; input: unknown; inputKept: boolean } | null> {
  const rows = await db.$queryRaw<{ message_type: string; detail: unknown; kept: boolean }[]>`
    select b.message_type, p.detail, p.id is not null as kept
      from "sagaflow"."inbox" b
      left join lateral (select id, detail from "sagaflow"."process_transitions"
                          where instance_id = ${args.instanceId}::uuid and message_id = b.message_id
                            and outcome = 'repair'
                          limit 1) p on true
     where b.consumer = ${args.consumer} and b.message_id = ${args.messageId}`;
  const row = rows[0];
  if (!row) return null;
  const detail = row.detail as { input?: unknown } | null;
  return { messageType: row.message_type, input: detail?.input, inputKept: row.kept && detail !== null };
}
