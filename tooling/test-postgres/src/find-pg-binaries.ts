import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';

import { TestPostgresError } from './test-postgres-error.ts';

/** Where Debian's `postgresql` package puts the PostgreSQL 15 server binaries. */
export const defaultPgBinDir = '/usr/lib/postgresql/15/bin';

export interface PgBinaries {
  readonly binDir: string;
  readonly initdb: string;
  readonly pgCtl: string;
  readonly postgres: string;
}

/** Resolves the server binaries in `binDir`, failing with the install command when any is missing. */
export function findPgBinaries(binDir: string = defaultPgBinDir): PgBinaries {
  const binaries: PgBinaries = {
    binDir,
    initdb: join(binDir, 'initdb'),
    pgCtl: join(binDir, 'pg_ctl'),
    postgres: join(binDir, 'postgres'),
  };
  const missing = [binaries.initdb, binaries.pgCtl, binaries.postgres].filter((file) => !isExecutable(file));
  if (missing.length > 0) {
    throw new TestPostgresError(
      'binaries_missing',
      `PostgreSQL 15 server binaries not found in ${binDir} (missing or not executable: ${missing.join(', ')}). ` +
        'Install them with `apt-get install -y postgresql` (Debian 12 ships PostgreSQL 15), ' +
        'or pass `binDir` pointing at a directory that holds initdb, pg_ctl and postgres.',
    );
  }
  return binaries;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
