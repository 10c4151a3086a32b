import { lookUpAccount } from '@sagaflow/test-process';
import { TestNatsError } from './test-nats-error.ts';

/** The unprivileged account the server runs as when this process is root. */
export interface RunAs {
  readonly user: string;
  readonly uid: number;
  readonly gid: number;
}

/**
 * `undefined` when not root: the server then runs as the current user. As root, the server is
 * dropped to the `nats` account that Debian's package creates, or to `nobody` when that is missing:
 * a broker under test has no business holding root.
 */
export function resolveRunAs(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const user of ['nats', 'nobody']) {
    const ids = lookUpAccount(user);
    if (ids !== undefined) return { user, ...ids };
  }
  throw new TestNatsError(
    'user_missing',
    'Running as root, so nats-server must run as `nats` or `nobody`, but neither account exists. ' +
      '`apt-get install -y nats-server` creates `nats`; or run the tests as a non-root user.',
  );
}
