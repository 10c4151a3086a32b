import type { Json } from '../definitions/define-action.ts';
import { Prisma } from '../generated/prisma/client.ts';
import type { HistoryWindow } from './history/history-window.ts';
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

/**
 * A window of an instance's history by id, a bigint compared as one (never as text, whose order
 * breaks where ids cross a digit boundary), through the (instance_id, id) index: the newest rows or
 * those before a cursor newest first, or those after a cursor oldest first (ADR 0035).
 */
export async function listProcessTransitions(
  db: Db,
  args: { instanceId: string } & HistoryWindow<bigint>,
): Promise<DbProcessTransition[]> {
  const forward = args.after !== undefined;
  const bound =
    args.after !== undefined
      ? Prisma.sql`and t.id > ${String(args.after)}::bigint`
      : args.before !== undefined
        ? Prisma.sql`and t.id < ${String(args.before)}::bigint`
        : Prisma.empty;
  // `t.id`, the column: a bare `id` would name the output column, the text `id::text as id`. The
  // instance is a range of one value and the order names it, so only the (instance_id, id) index
  // gives the order: the primary key walked from the cursor would pass every other instance's rows
  // (page-flow-events says why an equality is not enough).
  return db.$queryRaw<DbProcessTransition[]>`
    select t.id::text as id, from_state, to_state, message_id, message_type, outcome, detail, at
      from "sagaflow"."process_transitions" t
     where t.instance_id between ${args.instanceId}::uuid and ${args.instanceId}::uuid ${bound}
     order by ${forward ? Prisma.sql`t.instance_id, t.id` : Prisma.sql`t.instance_id desc, t.id desc`}
     limit ${args.limit}::int`;
}
