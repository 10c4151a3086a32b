import { Prisma, type PrismaClient } from '../generated/prisma/client.ts';
import { isLockWaitGivenUp } from '../process/process-deps.ts';
import { inSweepTransaction } from '../sweeps/in-sweep-transaction.ts';
import { statusIn } from './keyed-status.ts';
import type { Db } from './types.ts';

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
 * waits (ADR 0131). Past it the renewal is made again skipping the rows it cannot lock: those keep the
 * window they had and are missing from the answer, and the rest are renewed (review 68: one held row cost
 * every row of its statement the renewal, and a live publisher's delivered rows lapsed to a rival).
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
  const renew = (skipLocked: boolean) =>
    inSweepTransaction(prisma, args.timeoutMs, (tx) => renewRows(tx, args, skipLocked), {
      lock_timeout: String(args.lockWaitMs),
    });
  const renewed = await renew(false).catch((err: unknown) => {
    if (!isLockWaitGivenUp(err)) throw err;
    return renew(true);
  });
  return new Map(renewed.map((r) => [r.id, r.claimed_until]));
}

function renewRows(
  db: Db,
  args: { rows: readonly ClaimedOutboxRow[]; now: Date; visibilityTimeoutSeconds: number },
  skipLocked: boolean,
) {
  const ids = args.rows.map((r) => r.id);
  const attempts = args.rows.map((r) => r.attempts);
  const untils = args.rows.map((r) => r.claimed_until.toISOString());
  return db.$queryRaw<{ id: string; claimed_until: Date }[]>`
    with mine as (
      select o.id from "sagaflow"."outbox" o
        join unnest(${ids}::uuid[], ${attempts}::int[], ${untils}::timestamptz[]) c(id, attempts, claimed_until)
          on o.id = c.id
       where ${statusIn('o.status', ['Pending'])} and o.attempts = c.attempts and o.available_at = c.claimed_until
         for update of o ${skipLocked ? Prisma.sql`skip locked` : Prisma.empty}
    )
    update "sagaflow"."outbox" o
       set available_at = ${args.now}::timestamptz + make_interval(secs => ${args.visibilityTimeoutSeconds}::int)
      from mine where o.id = mine.id
    returning o.id::text as id, o.available_at as claimed_until`;
}
