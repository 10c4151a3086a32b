import { cpSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const migrationsDir = fileURLToPath(new URL('../../../../../../prisma/migrations', import.meta.url));

/** A copy of the shipped migrations older than `name`: the schema a previous release left behind. */
export function migrationsBefore(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'r47-migrations-'));
  for (const n of readdirSync(migrationsDir).filter((x) => /^\d{4}_/.test(x) && x < name))
    cpSync(join(migrationsDir, n), join(dir, n), { recursive: true });
  return dir;
}

/** The names of the shipped migrations from `name` on: what an upgrade from the release before `name` applies. */
export function migrationsFrom(name: string): string[] {
  return readdirSync(migrationsDir)
    .filter((x) => /^\d{4}_/.test(x) && x >= name)
    .sort();
}
