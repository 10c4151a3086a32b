import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

/**
 * A timeout whose delivery threw stays Pending with its deadline; it is tried again at `retryAt`
 * (ADR 0127: the caller doubles the delay per attempt, up to a cap). Its first failure sets
 * `first_failed_at` and journals one `process_timeout_failing` anomaly naming the instance, the
 * timeout, and the error, in the same statement: one entry when it starts failing, none per attempt.
 * Returns the attempts now counted, or null when the row is no longer Pending.
 */
export async function markProcessTimeoutFailed(
  db: Db,
  args: { id: string; error: string; retryAt: Date; now: Date },
): Promise<number | null> {
  const error = args.error.slice(0, 1000);
  const rows = await db.$queryRaw<{ attempts: number }[]>`
    with failed as (
      update "sagaflow"."process_timeouts"
         set attempts = attempts + 1, last_error = ${error}, retry_at = ${args.retryAt}::timestamptz,
             first_failed_at = coalesce(first_failed_at, ${args.now}::timestamptz)
       where id = ${args.id}::uuid and ${statusIn('status', ['Pending'])}
      returning id, instance_id, name, attempts
    ), journaled as (
      insert into "sagaflow"."anomaly_log" (code, row_id, name, site, message, details)
      select 'process_timeout_failing', f.id, f.name, 'process_timeouts',
             'process timeout ' || f.name || ' of instance ' || f.instance_id::text || ' failed: ' || ${error}
               || ' (it is retried with backoff and shown on the instance until it is delivered)',
             jsonb_build_object('instanceId', f.instance_id::text, 'processName', i.process_name,
                                'timeoutId', f.id::text, 'timeout', f.name, 'attempts', f.attempts,
                                'error', ${error}::text, 'retryAt', ${args.retryAt}::timestamptz)
        from failed f join "sagaflow"."saga_instances" i on i.id = f.instance_id
       where f.attempts = 1
    )
    select attempts from failed`;
  return rows[0]?.attempts ?? null;
}
