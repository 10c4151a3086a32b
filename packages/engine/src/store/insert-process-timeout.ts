import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

/** Arms a timeout: a persisted deadline and the state it expects. Its id becomes its message id. */
export async function insertProcessTimeout(
  db: Db,
  args: { instanceId: string; name: string; expectedState: string; payload: Json; dueAt: Date; now: Date },
): Promise<string> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    insert into "sagaflow"."process_timeouts" (instance_id, name, expected_state, payload, due_at, created_at)
    values (${args.instanceId}::uuid, ${args.name}, ${args.expectedState}, ${JSON.stringify(args.payload)}::jsonb,
            ${args.dueAt}::timestamptz, ${args.now}::timestamptz)
    returning id::text as id`;
  return rows[0]!.id;
}
