import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

/** A timeout whose delivery threw stays Pending with its deadline; it is tried again at `retryAt`. */
export async function markProcessTimeoutFailed(
  db: Db,
  args: { id: string; error: string; retryAt: Date },
): Promise<void> {
  await db.$executeRaw`
    update "sagaflow"."process_timeouts"
       set attempts = attempts + 1, last_error = ${args.error.slice(0, 1000)}, retry_at = ${args.retryAt}::timestamptz
     where id = ${args.id}::uuid and ${statusIn('status', ['Pending'])}`;
}
