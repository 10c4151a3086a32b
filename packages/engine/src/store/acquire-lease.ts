import type { Db } from './types.ts';

/**
 * Takes or renews the lease that makes one replica the only one running a singleton sweep
 * (monitor, doctor, timers). Kept on the DATABASE clock, not the host's: replicas with skewed clocks
 * still agree on who holds it and when it lapsed. Returns whether `holder` holds it now, and until when;
 * when another holder keeps it, who that is and until when (read after the upsert, which returns no row
 * then; null if the lease was given up in between).
 */
export async function acquireLease(
  db: Db,
  args: { name: string; holder: string; ttlSeconds: number },
): Promise<{ held: boolean; holder: string | null; expiresAt: Date | null }> {
  const rows = await db.$queryRaw<{ holder: string; expires_at: Date }[]>`
    insert into "sagaflow"."leases" (name, holder, expires_at, renewed_at)
    values (${args.name}, ${args.holder}, now() + make_interval(secs => ${args.ttlSeconds}::int), now())
    on conflict (name) do update
       set holder = excluded.holder, expires_at = excluded.expires_at, renewed_at = excluded.renewed_at
     where "sagaflow"."leases".expires_at < now() or "sagaflow"."leases".holder = excluded.holder
    returning holder, expires_at`;
  const row = rows[0];
  if (row) return { held: row.holder === args.holder, holder: row.holder, expiresAt: row.expires_at };
  // The upsert's `where` kept another holder's lease: who, and until when (review 36: "until ?").
  const [other] = await db.$queryRaw<{ holder: string; expires_at: Date }[]>`
    select holder, expires_at from "sagaflow"."leases" where name = ${args.name}`;
  return { held: false, holder: other?.holder ?? null, expiresAt: other?.expires_at ?? null };
}

/** Gives a lease up early (a replica shutting down), so another can take it at once. */
export async function releaseLease(db: Db, args: { name: string; holder: string }): Promise<void> {
  await db.lease.deleteMany({ where: { name: args.name, holder: args.holder } });
}
