import { appendFileSync, cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase } from '../../src/db/create-database.ts';
import type { Database } from '../../src/db/database.ts';
import { lockDirName, ownerFileName } from '../../src/db/lock-data-dir.ts';
import { migrate } from '../../src/db/migrate.ts';
import { claimTemplatesDir, reapStalePgliteTemplates, templatesPrefix } from './reap-stale-pglite-templates.ts';

/** Two closed PGlite data directories made once per run: one as initdb left it, one migrated. */
export interface PgliteTemplates {
  root: string;
  fresh: string;
  migrated: string;
}

/**
 * What the test copies run with beside initdb's settings: a test file's database holds a few hundred
 * rows, and PGlite zeroes all of its shared buffers on every start, in WASM (initdb's 128 MB took
 * ~0.45 s of each copy's ~0.65 s start on an idle machine, 16 MB ~0.05 s). Engine hosts keep initdb's
 * setting; ADR 0084.
 */
export const testCopySettings = 'shared_buffers = 16MB';

/**
 * A new PGlite runs initdb, ~8–12 s of WASM on these machines (more under load), and the engine
 * suite opens one per file. The run makes the two data directories once, in memory-backed storage
 * where there is some, and each file opens a copy (~0.25 s): ADR 0065, ADR 0084.
 */
export async function makePgliteTemplates(): Promise<PgliteTemplates> {
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  reapStalePgliteTemplates(base);
  const root = mkdtempSync(join(base, templatesPrefix));
  claimTemplatesDir(root);
  const fresh = join(root, 'fresh');
  const migrated = join(root, 'migrated');
  const db = await createDatabase({ kind: 'pglite', dataDir: fresh });
  await db.close();
  // postgresql.conf's last setting wins: this line overrides initdb's above it.
  appendFileSync(join(fresh, 'postgresql.conf'), `\n# sagaflow test copies (ADR 0084)\n${testCopySettings}\n`);
  copyDataDir(fresh, migrated);
  const m = await createDatabase({ kind: 'pglite', dataDir: migrated });
  try {
    await migrate(m);
  } finally {
    await m.close();
  }
  return { root, fresh, migrated };
}

/** Opens a private copy of a template; closing the database deletes the copy. */
export async function openPgliteCopy(templates: PgliteTemplates, migrated: boolean): Promise<Database> {
  const dir = mkdtempSync(join(templates.root, 'copy-'));
  copyDataDir(migrated ? templates.migrated : templates.fresh, dir);
  const db = await createDatabase({ kind: 'pglite', dataDir: dir });
  const close = db.close.bind(db);
  return Object.assign(db, {
    async close() {
      try {
        await close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  });
}

/** Copies a closed PGlite data directory without its holder's lock (a test hands the copy to a child process). */
export function copyDataDir(from: string, to: string): void {
  // A holder's lock never travels with a copy (none is left once the template is closed, but be sure).
  cpSync(from, to, {
    recursive: true,
    filter: (src) => !src.endsWith(`/${lockDirName}`) && !src.endsWith(`/${ownerFileName}`),
  });
}
