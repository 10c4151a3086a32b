import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { createDatabase } from '../../../../src/db/create-database.ts';
import type { Database } from '../../../../src/db/database.ts';
import type { SagaInstance } from '../../../../src/generated/prisma/client.ts';
import { createEngine, type Engine } from '../../../../src/index.ts';
import { holdRows, type HeldRows } from '../../../support/held-rows.ts';
import { openTestDatabase } from '../../../support/test-database.ts';
import { tallyProcess } from './tally-process.ts';

/**
 * The set-up of the reviews that hold an instance's row from another session (reviews 55–57): the
 * test's own database (`admin`, with a small pool for the test's reads), and `replicas` engines running
 * the tally process, each on a pool of its own, with `processes.transaction_timeout_ms` at `txMs` and
 * the anomaly log's echo off. Closing closes the engines' pools, lets go of every row still held, and
 * closes the database.
 */
export interface TallyEngines {
  admin: Database & { url?: string };
  engines: Engine[];
  dbs: Database[];
  /**
   * Delivers a Begin to a new key (or `key`) through a set-up engine at the default limits, and answers
   * the key and its instance's row.
   */
  begin(key?: string): Promise<{ key: string; instance: SagaInstance }>;
  /** Holds these instances' rows FOR UPDATE in a transaction of a connection of its own until its rollback. */
  holdInstances(ids: string[]): Promise<HeldRows>;
  close(): Promise<void>;
}

export async function openTallyEngines(options: {
  txMs: number;
  replicas?: number;
  /** One try per process transaction (no retry of a store fault): a refusal reaches the caller at once. */
  noStoreRetry?: boolean;
  adminPoolSize?: number;
  poolSize?: number;
}): Promise<TallyEngines> {
  const admin = await openTestDatabase({ poolSize: options.adminPoolSize ?? 2 });
  const dbs: Database[] = [];
  const engines: Engine[] = [];
  const held: HeldRows[] = [];
  for (let i = 0; i < (options.replicas ?? 1); i++) {
    const db = await createDatabase({ kind: 'postgres', url: admin.url!, poolSize: options.poolSize ?? 4 });
    dbs.push(db);
    engines.push(
      createEngine({
        db,
        flows: [],
        actions: [],
        processes: [tallyProcess],
        config: {
          processes: {
            transaction_timeout_ms: options.txMs,
            ...(options.noStoreRetry ? { store_retry: { max_attempts: 1 } } : {}),
          },
          logging: { anomaly_level: null },
        },
        logger: pino({ level: 'silent' }),
      }),
    );
  }
  // The scene is set through an engine of its own at the default limits: at the short limit under test an
  // ordinary Begin can be cut on a loaded machine (P2028), before anything the test is about (as review 58's
  // release test was, FLAKES-2026-12-07.md).
  const setupDb = await createDatabase({ kind: 'postgres', url: admin.url!, poolSize: 2 });
  const setup = createEngine({
    db: setupDb,
    flows: [],
    actions: [],
    processes: [tallyProcess],
    config: { logging: { anomaly_level: null } },
    logger: pino({ level: 'silent' }),
  });
  return {
    admin,
    engines,
    dbs,
    async begin(key = `k-${randomUUID()}`) {
      await setup.processes.deliver(tallyProcess, { id: randomUUID(), type: 'Begin', payload: { key } });
      const instance = await admin.prisma.sagaInstance.findFirstOrThrow({ where: { correlation_key: key } });
      return { key, instance };
    },
    async holdInstances(ids) {
      const rows = await holdRows(admin.url!, 'saga_instances', ids);
      held.push(rows);
      return rows;
    },
    async close() {
      await Promise.allSettled(held.map((h) => h.rollback()));
      await Promise.allSettled([...dbs, setupDb].map((d) => d.close()));
      await admin.close();
    },
  };
}
