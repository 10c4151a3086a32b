import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, migrate } from '@sagaflow/engine';

let initdbTemplate: Promise<string> | undefined;
let template: Promise<string> | undefined;

/** One embedded data directory per test process as initdb left it (no migration applied), closed. */
function initialisedTemplate(): Promise<string> {
  initdbTemplate ??= (async () => {
    const root = mkdtempSync(join(tmpdir(), 'sagaflow-control-template-initdb-'));
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
    const dir = join(root, 'pglite');
    await (await createDatabase({ kind: 'pglite', dataDir: dir })).close();
    return dir;
  })();
  return initdbTemplate;
}

/** One embedded data directory per test process, initdb'd and migrated once, closed. */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const root = mkdtempSync(join(tmpdir(), 'sagaflow-control-template-'));
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
    const dir = join(root, 'pglite');
    copyWithoutLock(await initialisedTemplate(), dir);
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

/** Copies a closed data directory; a holder's lock never travels with a copy (none is left, but be sure). */
function copyWithoutLock(from: string, to: string): void {
  cpSync(from, to, { recursive: true, filter: (src) => !/\/sagaflow\.lock(\.owner\.json)?$/.test(src) });
}

/**
 * A new embedded data directory as initdb leaves it, no migration applied: for a test whose subject is
 * a directory's migrations (applied at a control plane's start, stopped part way, an older set applied
 * first) but not initdb itself. A copy of one made once per test process, where a new directory costs
 * initdb's ~5 s of WASM; a start on it goes straight to the migrations a new directory's start reaches
 * after initdb.
 */
export async function initialisedDataDir(label: string): Promise<string> {
  const from = await initialisedTemplate();
  const to = join(mkdtempSync(join(tmpdir(), `sagaflow-${label}-`)), 'pglite');
  copyWithoutLock(from, to);
  return to;
}

/**
 * A new embedded data directory already initialised and migrated, for a test whose subject is not the
 * first start of a directory: a copy of one made once per test process (~0.2 s), where a new directory
 * costs its control plane initdb's ~5 s of WASM at start. A test about a new directory's migrations (or
 * a stop during them) starts from {@link initialisedDataDir}; one about initdb itself, or about what a
 * failed first start leaves, makes its own with `mkdtempSync`.
 */
export async function migratedDataDir(label: string): Promise<string> {
  const from = await migratedTemplate();
  const to = join(mkdtempSync(join(tmpdir(), `sagaflow-${label}-`)), 'pglite');
  copyWithoutLock(from, to);
  return to;
}
