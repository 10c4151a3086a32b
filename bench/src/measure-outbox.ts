/**
 * Measures the outbox publisher draining a backlog (issue 12 §2, ADR 0026): `--rows` Pending rows, 100
 * per source as the scale bench seeds them, published to an in-process transport by the engine's own
 * `publishOutboxBatch`, pass after pass until nothing is claimed, at each `--batch` size. A throwaway
 * PostgreSQL 15 cluster (test-postgres's settings: fsync off), rows seeded by set-based SQL and
 * ANALYZEd outside the timed drain. Prints rows/s; a measurement, not a test.
 *
 *   pnpm --filter @sagaflow/bench run bench:outbox [--rows 100000] [--batch 100,1000]
 */
import { parseArgs } from 'node:util';
import { createDatabase, inProcessTransport, migrate, publishOutboxBatch, type Database } from '@sagaflow/engine';
import { createDatabase as createPgDatabase, startCluster } from '@sagaflow/test-postgres';
import { pino } from 'pino';
import { progress } from './progress.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    batch: { type: 'string', default: '100,1000' },
  },
});
const rows = Number(values.rows);
const batches = values.batch.split(',').map(Number);

async function drain(db: Database, batch: number): Promise<{ delivered: number; seconds: number }> {
  await db.driver.query(
    `insert into "sagaflow"."outbox" (message_id, source_kind, source_id, type, destination, payload, available_at)
     select 'drain-${batch}-' || g, 'process', 'drain-${batch}-' || (g % $1::int), 'BenchMessage', 'bench',
            jsonb_build_object('g', g), now() - interval '1 minute'
       from generate_series(1, $2::int) g`,
    [Math.max(1, Math.floor(rows / 100)), rows],
  );
  await db.driver.exec('analyze "sagaflow"."outbox"');
  let delivered = 0;
  const routes = { bench: inProcessTransport(() => void delivered++) };
  const logger = pino({ level: 'silent' });
  progress(`draining ${rows} rows at batch ${batch}…`);
  const start = performance.now();
  for (;;) {
    const pass = await publishOutboxBatch({ db, routes, logger, config: { batch_size: batch } });
    if (pass.claimed === 0) break;
  }
  return { delivered, seconds: (performance.now() - start) / 1000 };
}

const cluster = await startCluster({ log: (line) => progress(`test-postgres: ${line}`) });
try {
  const url = await createPgDatabase(cluster.adminUrl, 'bench_outbox');
  const db = await createDatabase({ kind: 'postgres', url, poolSize: 4 });
  try {
    await migrate(db);
    for (const batch of batches) {
      const { delivered, seconds } = await drain(db, batch);
      const [left] = await db.driver.query<{ n: number }>(
        `select count(*)::int as n from "sagaflow"."outbox" where status <> 'Published'`,
      );
      process.stdout.write(
        `outbox publisher (batch ${batch}): ${delivered} rows in ${seconds.toFixed(1)} s = ${Math.round(delivered / seconds)} rows/s, ${left?.n ?? '?'} not Published\n`,
      );
    }
  } finally {
    await db.close();
  }
} finally {
  await cluster.stop();
}
