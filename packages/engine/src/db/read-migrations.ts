import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface MigrationFile {
  /** The folder name, e.g. `0001_init`: what `_prisma_migrations.migration_name` records. */
  name: string;
  sql: string;
  /** sha-256 of the file, hex: the checksum Prisma itself records. */
  checksum: string;
}

/** Reads `NNNN_name/migration.sql` folders in name order. */
export function readMigrations(dir: string): MigrationFile[] {
  return readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isDirectory())
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}
