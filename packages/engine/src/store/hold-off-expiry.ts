import { recordStuckChange } from './record-stuck-change.ts';
import type { Db } from './types.ts';
import { openRunByKey } from './keyed-status.ts';

/**
 * Counts a failed attempt to expire a run and holds the run off for a window that doubles per
 * failure (base, 2·base, 4·base, ...) up to `maxSeconds`. The count is never reset. The run says
 * why it is stuck (`expiry_failed: ...`) until it is expired or moves on by itself. A run that
 * finished meanwhile, or that another sweep already held off, is left alone (null). The first hold-off
 * of an episode writes `run.stuck` to the run's history in the same transaction (recordStuckChange):
 * call it inside a transaction.
 */
const failedPhrase = {
  plan: 'its rollback could not be planned',
  expiry: 'its expiry could not be written',
} as const;

export async function holdOffExpiry(
  db: Db,
  args: {
    runId: string;
    baseSeconds: number;
    maxSeconds: number;
    now: Date;
    error: string;
    /** What failed, as the stuck reason says it: the plan (a replay that threw) or the expiry's own transaction. */
    failed?: 'plan' | 'expiry';
  },
): Promise<{ attempts: number; retryAt: Date } | null> {
  const rows = await db.$queryRaw<{ attempts: number; retry_at: Date; stuck_reason: string }[]>`
    update "sagaflow"."flow_runs"
       set expiry_attempts = expiry_attempts + 1,
           expiry_retry_at = ${args.now}::timestamptz + make_interval(secs =>
             least(${args.maxSeconds}::float8, ${args.baseSeconds}::float8 * power(2, least(expiry_attempts, 40)))),
           stuck_reason = 'expiry_failed: past its business deadline, but ' || ${failedPhrase[args.failed ?? 'plan']}::text || ' (attempt '
             || (expiry_attempts + 1)::text || '): ' || left(${args.error}, 500)
     where id = ${args.runId}::uuid and expired_at is null and ${openRunByKey('status')}
       and (expiry_retry_at is null or expiry_retry_at <= ${args.now}::timestamptz)
    returning expiry_attempts as attempts, expiry_retry_at as retry_at, stuck_reason`;
  const row = rows[0];
  if (!row) return null;
  await recordStuckChange(db, { runId: args.runId, reason: row.stuck_reason, by: 'expiry' });
  return { attempts: row.attempts, retryAt: row.retry_at };
}
