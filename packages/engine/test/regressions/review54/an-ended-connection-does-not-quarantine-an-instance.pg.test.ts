import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { createProcessManager, type ProcessManager } from '../../../src/index.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { tallyProcess } from './support/tally-process.ts';

/**
 * Review 54: ADR 0008 "Store retries": connection errors are retried with backoff before they count
 * as a failure. The trouble: the engine's connection is ended (pg_terminate_backend) in the middle of
 * a delivery's transaction, after the instance row is locked, and the driver has seen its socket go
 * before the transaction's next statement (the order a loaded machine gives). That statement fails
 * with pg's "Client has encountered a connection error and is not queryable". Found by
 * a-process-outlives-its-connections-ended-and-its-pool-starved (1 run in about 10 with quarantine
 * on: an instance QUARANTINED with that message as its failure).
 */
describe('review 54: a connection ended inside a delivery (real PostgreSQL)', () => {
  let admin: Database & { url?: string };
  let db: Database;
  let pm: ProcessManager;
  const clock = new TestClock(new Date());
  let cutFor: string | null = null;
  beforeAll(async () => {
    admin = await openTestDatabase({ poolSize: 1 });
    db = await createDatabase({ kind: 'postgres', url: admin.url!, poolSize: 3 });
    const clients = () => (db.pool as unknown as { _clients: (pg.Client & { _queryable?: boolean })[] })._clients;
    pm = createProcessManager({
      db,
      processes: [tallyProcess],
      clock,
      config: { quarantine_after_seconds: 1 },
      logger: pino({ level: 'silent' }),
      faults: {
        afterLock: async ({ messageId }) => {
          if (messageId !== cutFor) return;
          cutFor = null;
          await admin.pool!.query(
            `select pg_terminate_backend(pid) from pg_stat_activity
              where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
          );
          // Progress: the driver has seen its connection end.
          await waitFor('the driver to see its connection end', async () =>
            clients().some((c) => c._queryable === false) ? true : undefined,
          );
        },
      },
    });
  });
  afterAll(async () => {
    await db?.close();
    await admin?.close();
  });

  const add = (id: string) => pm.deliver(tallyProcess, { id, type: 'Add', payload: { key: 'r54-ended', n: 1 } });

  it('a delivery whose connection was ended mid-transaction is retried and applied, and records no failure', async () => {
    const { instanceId } = await pm.deliver(tallyProcess, {
      id: 'r54-ended-begin',
      type: 'Begin',
      payload: { key: 'r54-ended' },
    });
    cutFor = 'r54-ended-add-1';
    const first = await add('r54-ended-add-1').then(
      (r) => r.outcome as string,
      (e: unknown) => `threw: ${(e as Error).message}`,
    );
    const afterFirst = await pm.find(instanceId!);

    // The broker redelivers it after the quarantine budget, and the connection is ended again.
    clock.advance(2_000);
    cutFor = 'r54-ended-add-1';
    const second = await add('r54-ended-add-1').then(
      (r) => r.outcome as string,
      (e: unknown) => `threw: ${(e as Error).message}`,
    );
    const afterSecond = await pm.find(instanceId!);
    expect({
      first,
      failureAfterFirst: afterFirst?.failure?.message ?? null,
      second,
      statusAfterSecond: afterSecond?.status,
      failureAfterSecond: afterSecond?.failure?.message ?? null,
    }).toEqual({
      first: 'applied',
      failureAfterFirst: null,
      second: 'duplicate',
      statusAfterSecond: 'ACTIVE',
      failureAfterSecond: null,
    });
  });
});
