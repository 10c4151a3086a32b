import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

/**
 * Returns a quarantined instance to ACTIVE and clears its failure record, conditional on the version
 * read under the lock. (A release by retry saves through saveSagaInstance instead.)
 */
export async function releaseSagaInstance(
  db: Db,
  args: { id: string; expectedVersion: number; now: Date },
): Promise<boolean> {
  const n = await db.$executeRaw`
    update "sagaflow"."saga_instances"
       set status = 'ACTIVE',
           failure_redelivery_key = null, failure_position = null, failure_error_type = null,
           failure_message = null, failure_message_type = null, failure_payload = null,
           first_failed_at = null,
           version = version + 1, updated_at = ${args.now}::timestamptz
     where id = ${args.id}::uuid and version = ${args.expectedVersion}::int and ${statusIn('status', ['QUARANTINED'])}`;
  return n === 1;
}
