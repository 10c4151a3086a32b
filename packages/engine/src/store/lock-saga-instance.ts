import { Prisma } from '../generated/prisma/client.ts';
import type { Db } from './types.ts';

/** An instance row as the deliver path reads it (state undecoded: jsonb as the driver returns it). */
export interface DbSagaInstance {
  id: string;
  process_name: string;
  correlation_key: string;
  status: 'ACTIVE' | 'COMPLETED' | 'QUARANTINED';
  current_state: string;
  state: unknown;
  version: number;
  /** Which entry into a state this is: the timeouts armed in it carry the same number. */
  state_visit: number;
  failure_redelivery_key: string | null;
  failure_message_type: string | null;
  failure_payload: unknown;
  failure_position: bigint | null;
  failure_error_type: string | null;
  failure_message: string | null;
  first_failed_at: Date | null;
}

/**
 * Reads an instance and locks its row until the transaction ends (`for update`): every handler of
 * one instance is serialised here, so two cannot both advance one state.
 */
export async function lockSagaInstance(
  db: Db,
  by: { processName: string; key: string } | { id: string },
): Promise<DbSagaInstance | null> {
  return selectSagaInstance(db, by, true);
}

/** The same read without the lock: for a preview, which writes and locks nothing. */
export async function readSagaInstance(db: Db, by: { id: string }): Promise<DbSagaInstance | null> {
  return selectSagaInstance(db, by, false);
}

async function selectSagaInstance(
  db: Db,
  by: { processName: string; key: string } | { id: string },
  lock: boolean,
): Promise<DbSagaInstance | null> {
  const where =
    'id' in by
      ? Prisma.sql`id = ${by.id}::uuid`
      : Prisma.sql`process_name = ${by.processName} and correlation_key = ${by.key}`;
  const rows = await db.$queryRaw<DbSagaInstance[]>(Prisma.sql`
    select id::text as id, process_name, correlation_key, status, current_state, state, version, state_visit,
           failure_redelivery_key, failure_message_type, failure_payload,
           failure_position, failure_error_type, failure_message, first_failed_at
      from "sagaflow"."saga_instances" where ${where}
       ${lock ? Prisma.sql`for update` : Prisma.empty}`);
  return rows[0] ?? null;
}
