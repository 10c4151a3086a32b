import { cpSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, migrate, migrationsDir } from '@sagaflow/engine';
import { describe, expect, it } from 'vitest';
import { initialisedDataDir, migratedDataDir } from '../../support/migrated-data-dir.ts';
import { testPassword } from '../../support/test-plane.ts';
import { controlProcess, until } from './control-process.ts';

const shipped = readdirSync(migrationsDir, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
const planeEnv = (dataDir: string, extra: Record<string, string> = {}) => ({
  CONTROL_PORT: '0',
  SAGAFLOW_DATA_DIR: dataDir,
  SAGAFLOW_ADMIN_PASSWORD: testPassword,
  ...extra,
});

async function appliedMigrations(dataDir: string): Promise<string[]> {
  const db = await createDatabase({ kind: 'pglite', dataDir });
  try {
    const rows = await db.driver.query<{ migration_name: string }>(
      'select migration_name from sagaflow._prisma_migrations where finished_at is not null order by migration_name',
    );
    return rows.map((r) => r.migration_name);
  } finally {
    await db.close();
  }
}

// packages/engine/src/db/migrate.ts: "Refuses a database that is ahead of this code (it has a
// migration we do not know)"; README "Health, readiness and metrics": /readyz is 200 only when the
// database "has exactly the migrations this code ships".
describe('review 34: an embedded data directory made by another version', () => {
  it('held: one from a newer version is refused at start-up, exit 1 with one line naming the migration; nothing changes and the lock is freed', async () => {
    // A copy of a migrated directory (made once per process), where initdb and the migrations cost ~5 s.
    const dataDir = await migratedDataDir('r34-newer');
    const db = await createDatabase({ kind: 'pglite', dataDir });
    await db.driver.query(
      `insert into sagaflow._prisma_migrations (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
         values ('r34', 'r34', '9999_from_a_newer_sagaflow', now(), now(), 1)`,
    );
    await db.close();

    const plane = controlProcess(planeEnv(dataDir));
    const exit = await plane.exited;
    expect(exit.code).toBe(1);
    expect(exit.err.trim().split('\n')).toHaveLength(1);
    expect(exit.err).toMatch(/^sagaflow control: .*9999_from_a_newer_sagaflow.*newer than this code/);
    expect(plane.output()).not.toContain('control plane listening');
    expect(existsSync(join(dataDir, 'sagaflow.lock'))).toBe(false);
    expect(await appliedMigrations(dataDir)).toEqual([...shipped, '9999_from_a_newer_sagaflow']);
  }, 300_000);

  it('held: one from an older version (its first migrations only) is brought up to date at start-up and is ready', async () => {
    // As initdb left it (a copy, made once per process): the older migrations are applied here.
    const dataDir = await initialisedDataDir('r34-older');
    const older = mkdtempSync(join(tmpdir(), 'sagaflow-r34-older-migrations-'));
    const kept = shipped.slice(0, Math.max(1, shipped.length - 6));
    for (const name of kept) cpSync(join(migrationsDir, name), join(older, name), { recursive: true });
    const db = await createDatabase({ kind: 'pglite', dataDir });
    await migrate(db, { dir: older });
    await db.close();
    expect(await appliedMigrations(dataDir)).toEqual(kept);

    const plane = controlProcess(planeEnv(dataDir));
    const url = await plane.listening;
    try {
      const ready = await until(async () => {
        const res = await fetch(`${url}/readyz`);
        return res.status === 200 ? ((await res.json()) as { status: string }) : undefined;
      });
      expect(ready.status).toBe('ready');
    } finally {
      plane.child.kill('SIGTERM');
    }
    expect((await plane.exited).code).toBe(0);
    expect(await appliedMigrations(dataDir)).toEqual(shipped);
  }, 300_000);

  it('held: a control plane SIGKILLed while it migrates a fresh directory leaves it to the next start, which applies every migration once', async () => {
    // As initdb left it (a copy, made once per process): the start goes straight to the migrations.
    const dataDir = await initialisedDataDir('r34-killed-migrating');
    const first = controlProcess(planeEnv(dataDir, { LOG_LEVEL: 'debug' }));
    // Progress, not time: the kill lands once a migration has begun applying.
    await until(async () => (/"status":"applying"/.test(first.output()) ? true : undefined));
    first.child.kill('SIGKILL');
    const killed = await first.exited;
    expect(killed.signal).toBe('SIGKILL');
    expect(killed.out).not.toContain('migrations up to date');

    const second = controlProcess(planeEnv(dataDir));
    const url = await second.listening;
    try {
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      second.child.kill('SIGTERM');
    }
    expect((await second.exited).code).toBe(0);
    expect(await appliedMigrations(dataDir)).toEqual(shipped);
  }, 300_000);
});
