import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, migrate } from '@sagaflow/engine';

let template: Promise<string> | undefined;

/** One embedded data directory per test process, initdb'd and migrated once, closed. */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const root = mkdtempSync(join(tmpdir(), 'sagaflow-control-template-'));
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
    const dir = join(root, 'pglite');
    const db = await createDatabase({ kind: 'pglite', dataDir: dir });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    return dir;
  })();
  return template;
}

/**
 * A new embedded data directory already initialised and migrated, for a test whose subject is not the
 * first start of a directory: a copy of one made once per test process (~0.2 s), where a new directory
 * costs its control plane initdb's ~5 s of WASM at start. A test about a fresh directory (its migration,
 * a stop during it, what a failed start leaves) makes its own with `mkdtempSync`.
 */
export async function migratedDataDir(label: string): Promise<string> {
  const from = await migratedTemplate();
  const to = join(mkdtempSync(join(tmpdir(), `sagaflow-${label}-`)), 'pglite');
  // A holder's lock never travels with a copy (none is left once the template is closed, but be sure).
  cpSync(from, to, { recursive: true, filter: (src) => !/\/sagaflow\.lock(\.owner\.json)?$/.test(src) });
  return to;
}
