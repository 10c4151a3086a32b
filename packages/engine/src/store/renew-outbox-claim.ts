import type { PrismaClient } from '../generated/prisma/client.ts';
import { inSweepTransaction } from '../sweeps/in-sweep-transaction.ts';
import { statusIn } from './keyed-status.ts';

/** A claimed row as its claim left it: the attempt it counted and the window it wrote. */
export interface ClaimedOutboxRow {
  id: string;
  attempts: number;
  claimed_until: Date;
}

/**
 * Extends the claim window of rows this publisher still holds: `available_at` is pushed to
 * `now + visibilityTimeoutSeconds` for each row that is still Pending with the attempt and the window
 * its claim wrote (ADR 0139). A row whose claim was lost (another publisher claimed it after its window
 * lapsed, a requeue, its own failure or release already written) or that is Published does not match and
 * is left as it is: only a publisher that still holds a row can keep it, so renewing never takes a row
 * from a rival. Returns the new window of each row it renewed; a row missing from it is no longer this
 * publisher's to send.
 *
 * A row another session holds is waited for at most `lockWaitMs` (`lock_timeout`), as the Published mark
 * waits (ADR 0131): past it the statement fails and the caller keeps the window it had.
 */
export async function renewOutboxClaim(
  prisma: PrismaClient,
  args: {
    rows: readonly ClaimedOutboxRow[];
    now: Date;
    visibilityTimeoutSeconds: number;
    lockWaitMs: number;
    timeoutMs: number;
  },
): Promise<Map<string, Date>> {
  if (args.rows.length === 0) return new Map();
  const ids = args.rows.map((r) => r.id);
  const attempts = args.rows.map((r) => r.attempts);
  const untils = args.rows.map((r) => r.claimed_until.toISOString());
  const renewed = await inSweepTransaction(
    prisma,
    args.timeoutMs,
    (tx) => tx.$queryRaw<{ id: string; claimed_until: Date }[]>`
      update "sagaflow"."outbox" o
         set available_at = ${args.now}::timestamptz + make_interval(secs => ${args.visibilityTimeoutSeconds}::int)
        from unnest(${ids}::uuid[], ${attempts}::int[], ${untils}::timestamptz[]) c(id, attempts, claimed_until)
       where o.id = c.id and ${statusIn('o.status', ['Pending'])} and o.attempts = c.attempts
         and o.available_at = c.claimed_until
      returning o.id::text as id, o.available_at as claimed_until`,
    { lock_timeout: String(args.lockWaitMs) },
  );
  return new Map(renewed.map((r) => [r.id, r.claimed_until]));
}
