/**
 * Fix 47 (ADR 0123), measurements only: an upgrade from 0029 while a host transaction that wrote a run
 * stays open for `holdMs`, and a writer updates another run every 5 ms as the engine's transitions do.
 * Reports the writer's worst and p99 latency while the upgrade waits, the attempts the runner made, and
 * how long after the host's commit the upgrade was done. `old` runs the single-transaction runner of s40,
 * put beside the current one first (and removed after):
 *
 *   cd packages/engine && git show s40:packages/engine/src/db/migrate.ts > src/db/old-migrate.tmp.ts
 *   npx tsx --conditions=@sagaflow/source test/regressions/review47/measure-lock-retries.ts [holdMs] [old]
 */
import { cpSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase as createPgDatabase, getTestCluster, uniqueDatabaseName } from '@sagaflow/test-postgres';
import pg from 'pg';
import { pino } from 'pino';
import { createDatabase } from '../../../src/db/create-database.ts';
import { migrate } from '../../../src/db/migrate.ts';

const migrationsDir = fileURLToPath(new URL('../../../../../prisma/migrations', import.meta.url));
const holdMs = Number(process.argv[2] ?? 5000);
const old = process.argv[3] === 'old';

async function main() {
  const cluster = await getTestCluster();
  const url = await createPgDatabase(cluster.adminUrl, uniqueDatabaseName('r47l'));
  const db = await createDatabase({ kind: 'postgres', url, poolSize: 1 });
  const before = mkdtempSync(join(tmpdir(), 'r47-l-'));
  for (const n of readdirSync(migrationsDir).filter((x) => /^\d{4}_/.test(x) && x < '0030_'))
    cpSync(join(migrationsDir, n), join(before, n), { recursive: true });
  await migrate(db, { dir: before });
  const ids = (
    await db.driver.query<{ id: string }>(
      `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input)
       select 'm', 1, 'Running', '{}'::jsonb from generate_series(1, 2) returning id::text`,
    )
  ).map((r) => r.id);
  const host = new pg.Client({ connectionString: url, application_name: 'measure-host' });
  const writer = new pg.Client({ connectionString: url });
  await host.connect();
  await writer.connect();
  await host.query('begin');
  await host.query(`update "sagaflow"."flow_runs" set tags = tags where id = $1::uuid`, [ids[0]]);
  let attempts = 0;
  const logger = pino({ level: 'warn' }, { write: () => void attempts++ });
  const runner = old
    ? (
        (await import(fileURLToPath(new URL('../../../src/db/old-migrate.tmp.ts', import.meta.url)))) as {
          migrate: typeof migrate;
        }
      ).migrate
    : migrate;
  const t0 = performance.now();
  let committedAt = 0;
  let doneAt = 0;
  const upgrade = runner(db, { logger }).then(() => (doneAt = performance.now()));
  const latencies: number[] = [];
  const committing = new Promise((r) => setTimeout(r, holdMs))
    .then(() => host.query('commit'))
    .then(() => (committedAt = performance.now()));
  while (!doneAt) {
    const s = performance.now();
    await writer.query(`update "sagaflow"."flow_runs" set updated_at = now() where id = $1::uuid`, [ids[1]]);
    // A write begun while the host was open, measured to its end (the s40 runner holds it past the commit).
    if (s < t0 + holdMs) latencies.push(performance.now() - s);
    await new Promise((r) => setTimeout(r, 5));
  }
  await upgrade;
  await committing;
  latencies.sort((a, b) => a - b);
  const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(1);
  console.log(
    JSON.stringify({
      runner: old ? 's40 (one transaction)' : 'fix47',
      holdMs,
      writes: latencies.length,
      p50: p(0.5),
      p99: p(0.99),
      max: latencies[latencies.length - 1]!.toFixed(1),
      over50ms: latencies.filter((l) => l > 50).length,
      retriesLogged: attempts,
      doneAfterCommitMs: (doneAt - committedAt).toFixed(0),
    }),
  );
  await host.end();
  await writer.end();
  await db.close();
}
await main();
process.exit(0);
