import { fork, type ChildProcess } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchExecArgv } from './bench-exec-argv.mjs';

/**
 * Forks one of the bench's own TypeScript modules (`url`, relative to a caller's `import.meta.url`)
 * as a child with an IPC channel, run as the bench runs its sources: the engine from its build, or
 * from its sources where this process's NODE_OPTIONS say so (the test suite's). Its stdout and stderr
 * go to this process's stderr, so the report on stdout stays clean.
 */
export function forkBenchChild(url: URL, args: readonly string[]): ChildProcess {
  const path = fileURLToPath(url);
  return fork(path, [...args], {
    cwd: dirname(dirname(path)),
    execArgv: benchExecArgv,
    stdio: ['ignore', 2, 2, 'ipc'],
  });
}

/** How a child ended: its signal, or `code N`. */
export function exitOf(child: ChildProcess): Promise<string> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve(child.signalCode ?? `code ${child.exitCode}`);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? `code ${code}`)));
}
