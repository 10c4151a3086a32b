import type { Db } from './types.ts';

/** The columns an instance view needs, state excluded: listing never reads or decodes state. */
export interface DbSagaInstanceSummary {
  id: string;
  process_name: string;
  correlation_key: string;
  status: 'ACTIVE' | 'COMPLETED' | 'QUARANTINED';
  current_state: string;
  version: number;
  next_timer_due_at: Date | null;
  last_message_id: string | null;
  failure_redelivery_key: string | null;
  failure_position: bigint | null;
  failure_error_type: string | null;
  failure_message: string | null;
  failure_message_type: string | null;
  first_failed_at: Date | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

/** One instance by id, with its raw state (jsonb) for the caller to try decoding. */
export async function findSagaInstance(
  db: Db,
  id: string,
): Promise<(DbSagaInstanceSummary & { state: unknown }) | null> {
  const rows = await db.$queryRaw<(DbSagaInstanceSummary & { state: unknown })[]>`
    select id::text as id, process_name, correlation_key, status, current_state, version, next_timer_due_at,
           last_message_id, failure_redelivery_key, failure_position, failure_error_type, failure_message,
           failure_message_type, first_failed_at, created_at, updated_at, completed_at, state
      from "sagaflow"."saga_instances" where id = ${id}::uuid`;
  return rows[0] ?? null;
}
