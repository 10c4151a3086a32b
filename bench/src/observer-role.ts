import { withPgClient } from './with-pg-client.ts';

/**
 * The role the bench's own queries run as (waiting for runs, reading their times). Separate from the
 * engine's role so its statements can be left out of pg_stat_statements by user id.
 */
export const observerRole = 'bench_observer';

export async function createObserverRole(adminUrl: string): Promise<void> {
  await withPgClient(adminUrl, async (c) => {
    await c.query(`create role ${observerRole} login`);
    await c.query(`grant pg_read_all_data, pg_monitor to ${observerRole}`);
  });
}

/** `url` with its user replaced by the observer role (the cluster trusts local logins). */
export function asObserver(url: string): string {
  const u = new URL(url);
  u.username = observerRole;
  return u.toString();
}
