import { execFile, execFileSync } from 'node:child_process';

import type { RunAs } from './resolve-run-as.ts';
import { TestPostgresError } from './test-postgres-error.ts';

export interface RunPgBinaryOptions {
  readonly runAs: RunAs | undefined;
  /** Set explicitly: as root, the caller's cwd (e.g. /root) may be unreadable for `postgres`. */
  readonly cwd: string;
}

/** Runs a PostgreSQL binary, through `runuser -u postgres --` when `runAs` is set. Resolves to stdout. */
export function runPgBinary(file: string, args: readonly string[], options: RunPgBinaryOptions): Promise<string> {
  const [command, argv] = commandLine(file, args, options.runAs);
  return new Promise((resolve, reject) => {
    execFile(command, argv, { cwd: options.cwd, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(commandFailed(command, argv, stderr, error));
      else resolve(stdout);
    });
  });
}

/** Synchronous twin of {@link runPgBinary}, for process 'exit' handlers where nothing async runs. */
export function runPgBinarySync(file: string, args: readonly string[], options: RunPgBinaryOptions): string {
  const [command, argv] = commandLine(file, args, options.runAs);
  try {
    return execFileSync(command, argv, { cwd: options.cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr;
    throw commandFailed(command, argv, typeof stderr === 'string' ? stderr : '', error);
  }
}

function commandLine(file: string, args: readonly string[], runAs: RunAs | undefined): [string, string[]] {
  return runAs === undefined ? [file, [...args]] : ['runuser', ['-u', runAs.user, '--', file, ...args]];
}

function commandFailed(command: string, argv: readonly string[], stderr: string, cause: unknown): TestPostgresError {
  const notFound = (cause as { code?: unknown }).code === 'ENOENT';
  const hint = notFound
    ? command === 'runuser'
      ? ' `runuser` (util-linux) is not on PATH; it is needed to run PostgreSQL as `postgres` when running as root.'
      : ' The binary does not exist.'
    : '';
  const detail = stderr.trim() === '' ? String((cause as Error).message) : stderr.trim();
  return new TestPostgresError('command_failed', `\`${[command, ...argv].join(' ')}\` failed: ${detail}${hint}`, {
    cause,
  });
}
