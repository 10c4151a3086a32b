import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

export interface DbProcessTransition {
  id: string;
  from_state: string;
  to_state: string;
  message_id: string;
  message_type: string;
  outcome: string;
  detail: Json | null;
  at: Date;
}

/** The newest `limit` rows of an instance's history, newest first. */
export async function listProcessTransitions(
  db: Db,
  args: { instanceId: string; limit: number },
): Promise<DbProcessTransition[]> {
  return db.$queryRaw<DbProcessTransition[]>`
    select id::text as id, from_state, to_state, message_id, message_type, outcome, detail, at
      from "sagaflow"."process_transitions"
     where instance_id = ${args.instanceId}::uuid
     order by id desc
     limit ${args.limit}::int`;
}
