import { accessSync, constants } from 'node:fs';

import { TestNatsError } from './test-nats-error.ts';

/** Where Debian's `nats-server` package (bookworm: 2.9.10) puts the binary, then the usual other place. */
export const natsServerCandidates = ['/usr/sbin/nats-server', '/usr/bin/nats-server'] as const;

/** The first executable `nats-server` among `candidates`, failing with the install command when none is. */
export function findNatsServer(candidates: readonly string[] = natsServerCandidates): string {
  const found = candidates.find(isExecutable);
  if (found === undefined) {
    throw new TestNatsError(
      'binary_missing',
      `nats-server not found (looked at ${candidates.join(', ')}). ` +
        'Install it with `apt-get install -y nats-server` (Debian 12 ships 2.9.10), or pass `binary`.',
    );
  }
  return found;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
