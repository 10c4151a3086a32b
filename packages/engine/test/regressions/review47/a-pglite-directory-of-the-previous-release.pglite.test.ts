import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { migrationsBefore, migrationsFrom } from './support/before.ts';

/**
 * Review 47: an embedded PGlite data directory the previous release created (migrated to 0029, with runs
 * written by a replica whose clock ran behind), closed, then opened by this release: its start-up migration
 * brings it to 0031, mends the skewed rows, and the directory opens again afterwards with nothing pending.
 */
describe('a PGlite data directory of the previous release (PGlite)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'r47-pglite-'));
  const before = migrationsBefore('0030_');
  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(before, { recursive: true, force: true });
  });

  it('held: opened by the current code, it is migrated to the latest, its skewed rows mended, and a reopen applies nothing', async () => {
    const old = await createDatabase({ kind: 'pglite', dataDir });
    try {
      await migrate(old, { dir: before });
      await old.driver.exec(`
        insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, created_at, updated_at)
        select 'old', 1, 'Completed', jsonb_build_object('n', g), now() - make_interval(secs => g),
               now() - make_interval(secs => g) + case when g % 3 = 0 then interval '-5 seconds' else interval '1 second' end
          from generate_series(1, 3000) g;`);
    } finally {
      await old.close();
    }

    const current = await createDatabase({ kind: 'pglite', dataDir });
    try {
      expect((await migrate(current)).applied).toEqual(migrationsFrom('0030_'));
      const [counts] = await current.driver.query<{ all: number; skewed: number }>(
        `select count(*)::int as all, count(*) filter (where updated_at < created_at)::int as skewed from "sagaflow"."flow_runs"`,
      );
      expect(counts).toEqual({ all: 3000, skewed: 0 });
    } finally {
      await current.close();
    }

    const again = await createDatabase({ kind: 'pglite', dataDir });
    try {
      expect((await migrate(again)).applied).toEqual([]);
      const [rows] = await again.driver.query<{ n: number; unfinished: number }>(
        `select count(*)::int as n, count(*) filter (where finished_at is null)::int as unfinished from "sagaflow"."_prisma_migrations"`,
      );
      expect(rows?.unfinished).toBe(0);
      expect(rows?.n).toBeGreaterThan(25);
    } finally {
      await again.close();
    }
  }, 180_000);
});
