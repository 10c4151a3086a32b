import pg from 'pg';
import { waitFor } from './wait-for.ts';

/**
 * Waits until no session is open on the database of `url` (read through `adminUrl`): a backend flushes
 * its statistics counters when it exits, so counts read after this include everything it did.
 */
export async function waitForBackendsToExit(adminUrl: string, url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const database = new URL(url).pathname.slice(1);
    await waitFor('the engine backends to exit', async () => {
      const { rows } = await admin.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where datname = $1`,
        [database],
      );
      return rows[0]?.n === 0 ? true : undefined;
    });
  } finally {
    await admin.end();
  }
}
