import type { RawDb } from '../db/raw-db.ts';

/**
 * The overlap lock (seed 000's WithoutOverlapping): taken when free or expired, held until released
 * or its TTL passes. Independent of reclaim. Returns whether this owner holds it now.
 */
export async function acquireLock(
  db: RawDb,
  args: { key: string; owner: string; ttlSeconds: number; now: Date },
): Promise<boolean> {
  const rows = await db.$queryRaw<{ owner: string }[]>`
    insert into "sagaflow"."locks" (key, owner, expires_at)
    values (${args.key}, ${args.owner}, ${args.now}::timestamptz + make_interval(secs => ${args.ttlSeconds}::int))
    on conflict (key) do update set owner = excluded.owner, expires_at = excluded.expires_at
     where "sagaflow"."locks".expires_at < ${args.now}::timestamptz or "sagaflow"."locks".owner = excluded.owner
    returning owner`;
  return rows[0]?.owner === args.owner;
}

export async function releaseLock(db: RawDb, args: { key: string; owner: string }): Promise<void> {
  await db.$executeRaw`delete from "sagaflow"."locks" where key = ${args.key} and owner = ${args.owner}`;
}
