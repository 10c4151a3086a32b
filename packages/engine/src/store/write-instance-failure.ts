import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

export interface FailureRecord {
  /** The failing message's id: what tells it apart from its own redelivery. */
  redeliveryKey: string;
  messageType: string;
  payload: unknown;
  position: bigint | null;
  errorType: string;
  /** Cut to 1,000 characters by the caller; the log keeps the whole error. */
  message: string;
  firstFailedAt: Date;
}

/**
 * Writes an instance's failure record, and with `quarantine` moves it to QUARANTINED, under a
 * compare-and-set on the version read: a writer that lost it records nothing (the next failure tries
 * again). The state column is not touched: the state the instance stopped on stays for its repairer.
 */
export async function writeInstanceFailure(
  db: Db,
  args: { id: string; expectedVersion: number; record: FailureRecord; quarantine: boolean; now: Date },
): Promise<boolean> {
  const r = args.record;
  const n = await db.$executeRaw`
    update "sagaflow"."saga_instances"
       set failure_redelivery_key = ${r.redeliveryKey},
           failure_message_type = ${r.messageType},
           failure_payload = ${JSON.stringify(r.payload ?? null)}::jsonb,
           failure_position = ${r.position}::bigint,
           failure_error_type = ${r.errorType},
           failure_message = ${r.message},
           first_failed_at = ${r.firstFailedAt}::timestamptz,
           status = case when ${args.quarantine} then 'QUARANTINED' else status end,
           version = version + 1,
           updated_at = ${args.now}::timestamptz
     where id = ${args.id}::uuid and version = ${args.expectedVersion}::int and ${statusIn('status', ['ACTIVE'])}`;
  return n === 1;
}
