import { expect } from 'vitest';
import type { Database } from '../../../../src/index.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { gate } from '../../harness.ts';

/**
 * The same database, with the pool's LISTEN under the test's hand (PostgreSQL): `lose()` ends the
 * listener's connection on the server and holds its next LISTEN back until `retake()`, so a NOTIFY
 * sent in between reaches no one.
 */
export function losableListen(db: Database) {
  const listen = db.listen!.bind(db);
  let listens = 0;
  let hold: ReturnType<typeof gate> | null = null;
  const database: Database = {
    ...db,
    listen: async (channel, onNotify) => {
      listens += 1;
      if (hold) await hold.promise;
      return listen(channel, onNotify);
    },
  };
  return {
    database,
    /** Ends the LISTEN's connection and waits until the listener asks for another, held back. */
    async lose() {
      hold = gate();
      const before = listens;
      // The listener's connection may still be on its way (a pool claims before its LISTEN has taken
      // hold, and after retake() the next LISTEN takes a moment): end it once it is there.
      const killed = await waitFor("the listener's connection, to end it", async () => {
        const rows = await db.driver.query<{ ok: boolean }>(
          `select pg_terminate_backend(pid) as ok from pg_stat_activity
            where datname = current_database() and application_name = 'sagaflow-listener'`,
        );
        return rows.length > 0 ? rows : undefined;
      });
      expect(killed.map((k) => k.ok)).toEqual([true]);
      await waitFor('the listener to listen again', async () => (listens > before ? true : undefined));
    },
    /** Lets the held LISTEN go (it takes hold once the server answers). */
    retake() {
      hold?.open();
      hold = null;
    },
  };
}
