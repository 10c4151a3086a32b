import { lookUpAccount } from '@sagaflow/test-process';

import { TestPostgresError } from './test-postgres-error.ts';

/** The account PostgreSQL runs as when this process is root (postgres refuses to run as root). */
export interface RunAs {
  readonly user: 'postgres';
  readonly uid: number;
  readonly gid: number;
}

let cached: { runAs: RunAs | undefined } | undefined;

/**
 * `undefined` when not root: the binaries then run directly as the current user. As root, looks up
 * the `postgres` account once; every binary is then run through `runuser -u postgres --`.
 */
export function resolveRunAs(): RunAs | undefined {
  if (cached === undefined) cached = { runAs: process.getuid?.() === 0 ? lookUpPostgresUser() : undefined };
  return cached.runAs;
}

function lookUpPostgresUser(): RunAs {
  const ids = lookUpAccount('postgres');
  if (ids === undefined)
    throw new TestPostgresError(
      'postgres_user_missing',
      'Running as root, so PostgreSQL must run as the `postgres` user, but `id -u postgres` failed. ' +
        '`apt-get install -y postgresql` creates that user; or run the tests as a non-root user.',
    );
  return { user: 'postgres', ...ids };
}
