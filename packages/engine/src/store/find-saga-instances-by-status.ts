import { Prisma } from '../generated/prisma/client.ts';
import type { DbSagaInstanceSummary } from './find-saga-instance.ts';
import type { Db } from './types.ts';

/**
 * Instances in a status last updated strictly before `updatedBefore`, stalest first, at most `limit`.
 * No paging on purpose (many rows share one millisecond); the state column is never selected.
 */
export async function findSagaInstancesByStatus(
  db: Db,
  args: { status: string; updatedBefore: Date; limit: number; processName?: string },
): Promise<DbSagaInstanceSummary[]> {
  const byProcess = args.processName === undefined ? Prisma.empty : Prisma.sql`and process_name = ${args.processName}`;
  return db.$queryRaw<DbSagaInstanceSummary[]>(Prisma.sql`
    select id::text as id, process_name, correlation_key, status, current_state, version, next_timer_due_at,
           last_message_id, failure_redelivery_key, failure_position, failure_error_type, failure_message,
           failure_message_type, first_failed_at, created_at, updated_at, completed_at
      from "sagaflow"."saga_instances"
     where status = ${args.status} and updated_at < ${args.updatedBefore}::timestamptz ${byProcess}
     order by updated_at, id
     limit ${args.limit}::int`);
}
