import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

/**
 * Queues a command for the outbox publisher, in the caller's transaction. `messageId` is derived from
 * the message that caused it, so a retried delivery cannot queue it twice (`on conflict do nothing`).
 */
export async function insertOutboxMessage(
  db: Db,
  args: {
    messageId: string;
    sourceKind: 'process' | 'flow';
    sourceId: string;
    type: string;
    destination: string;
    payload: Json;
    headers: Record<string, string>;
    now: Date;
  },
): Promise<void> {
  await db.$executeRaw`
    insert into "sagaflow"."outbox"
      (message_id, source_kind, source_id, type, destination, payload, headers, status, available_at, created_at)
    values (${args.messageId}, ${args.sourceKind}, ${args.sourceId}, ${args.type}, ${args.destination},
            ${JSON.stringify(args.payload)}::jsonb, ${JSON.stringify(args.headers)}::jsonb, 'Pending',
            ${args.now}::timestamptz, ${args.now}::timestamptz)
    on conflict (message_id) do nothing`;
}
