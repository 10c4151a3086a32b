import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { compiledControlFile } from './compiled-control.ts';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

export interface CliAnswer {
  code: number;
  out: string;
  err: string;
}

/**
 * Runs the real CLI as a child process, as `npm run sagaflow -- ...` does, with `stdin` piped in. Its
 * environment is PATH, HOME and `env` only: no SAGAFLOW_TOKEN or DATABASE_URL leaks in from the test's.
 * It runs from the control plane and engine compiled once per run (support/global-setup-test-build.ts):
 * the same sources without tsx's loader in each process, every command (those over HTTP and those that
 * open the database and load the engine: the sweeps, prune, the break-glass reset). Plain node, without
 * the `@sagaflow/source` condition: `@sagaflow/engine` is the build's compiled copy.
 */
export function runCli(args: string[], env: Record<string, string>, stdin?: string): Promise<CliAnswer> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [compiledControlFile('cli'), ...args],
      {
        cwd: root,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'silent', ...env },
        timeout: 60_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout, err: stderr }),
    );
    child.stdin?.end(stdin ?? '');
  });
}
