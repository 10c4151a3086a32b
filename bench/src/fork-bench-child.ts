import { fork, type ChildProcess } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

// The bench runs its TypeScript sources through tsx, resolved from the bench package.
const execArgv = ['--conditions=@sagaflow/source', '--import', 'tsx'];

/**
 * Forks one of the bench's own TypeScript modules (`url`, relative to a caller's `import.meta.url`)
 * as a child with an IPC channel, run as the bench runs its sources. Its stdout and stderr go to
 * this process's stderr, so the report on stdout stays clean.
 */
export function forkBenchChild(url: URL, args: readonly string[]): ChildProcess {
  const path = fileURLToPath(url);
  return fork(path, [...args], {
    cwd: dirname(dirname(path)),
    execArgv,
    stdio: ['ignore', 2, 2, 'ipc'],
  });
}

/** How a child ended: its signal, or `code N`. */
export function exitOf(child: ChildProcess): Promise<string> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve(child.signalCode ?? `code ${child.exitCode}`);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? `code ${code}`)));
}
