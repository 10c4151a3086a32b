import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import '../provided-context.ts';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

export interface CliAnswer {
  code: number;
  out: string;
  err: string;
}

/**
 * The commands that open the database themselves and load the engine (cli/run-cli.ts's dispatch: the
 * sweeps, prune, the break-glass reset). A word that only looks like one (an argument's value) just
 * runs that command from its sources too.
 */
function loadsTheEngine(args: readonly string[]): boolean {
  return (
    args.some((a) => a === 'monitor' || a === 'doctor' || a === 'prune') ||
    (args.includes('reset-password') && args.includes('--local'))
  );
}

/**
 * The CLI's entry: the commands over HTTP from the control plane compiled once per run
 * (support/global-setup-test-build.ts), the same sources without tsx's loader in each process; the
 * commands that load the engine from the sources under tsx, as before (the engine's own build is not
 * made for the tests). Run compiled, a command that loaded the engine would fail loudly: under the
 * source condition the engine resolves to its TypeScript, which plain node refuses.
 */
function cliEntry(args: readonly string[]): string[] {
  if (loadsTheEngine(args)) return ['--import', 'tsx', 'apps/control/src/cli.ts'];
  return [join(inject('testBuild'), 'cli.js')];
}

/**
 * Runs the real CLI as a child process, as `npm run sagaflow -- ...` does, with `stdin` piped in. Its
 * environment is PATH, HOME and `env` only: no SAGAFLOW_TOKEN or DATABASE_URL leaks in from the test's.
 */
export function runCli(args: string[], env: Record<string, string>, stdin?: string): Promise<CliAnswer> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--conditions=@sagaflow/source', ...cliEntry(args), ...args],
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
