import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

/**
 * Arms a timeout: a persisted deadline, the state it expects and the visit to that state it belongs
 * to (the instance's `state_visit` after the arming transition). Its id becomes its message id.
 */
export async function insertProcessTimeout(
  db: Db,
  args: {
    instanceId: string;
    name: string;
    expectedState: string;
    armedVisit: number;
    payload: Json;
    dueAt: Date;
    now: Date;
  },
): Promise<string> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    insert into "sagaflow"."process_timeouts" (instance_id, name, expected_state, armed_visit, payload, due_at, created_at)
    values (${args.instanceId}::uuid, ${args.name}, ${args.expectedState}, ${args.armedVisit}::int,
            ${JSON.stringify(args.payload)}::jsonb,
            ${args.dueAt}::timestamptz, ${args.now}::timestamptz)
    returning id::text as id`;
  return rows[0]!.id;
}
