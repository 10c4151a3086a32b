import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

export interface CliAnswer {
  code: number;
  out: string;
  err: string;
}

/**
 * Runs the real CLI as a child process, as `npm run sagaflow -- ...` does, with `stdin` piped in. Its
 * environment is PATH, HOME and `env` only: no SAGAFLOW_TOKEN or DATABASE_URL leaks in from the test's.
 */
export function runCli(args: string[], env: Record<string, string>, stdin?: string): Promise<CliAnswer> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--conditions=@sagaflow/source', '--import', 'tsx', 'apps/control/src/cli.ts', ...args],
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
