import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { assertNamesItsDatabase, controlEntry, type ControlFrom } from './compiled-control.ts';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

/** How a spawned process ended, with everything it wrote. */
export interface Exit {
  code: number | null;
  signal: string | null;
  out: string;
  err: string;
}

export interface ControlProcess {
  child: ChildProcessWithoutNullStreams;
  exited: Promise<Exit>;
  /** Its URL once it logs that it listens; rejects if the process ends first. */
  listening: Promise<string>;
  /** Everything it wrote to stdout (its JSON log lines) so far. */
  output: () => string;
  /** Everything it wrote to stderr so far. */
  stderr: () => string;
  /** SIGTERM unless it has already ended; resolves once it has. */
  stop: () => Promise<Exit>;
}

/**
 * A real control plane process (its own pid, heap and sockets), logging JSON at info unless `env` says
 * otherwise. `nodeArgs` go before the script (e.g. `--max-old-space-size=1024`, the heap cap the product
 * runs with, ADR 0044). `from`: node + tsx on apps/control/src/main.ts (the default: the history memory
 * tests measure this process's heap, as they were calibrated), or `build`, plain node on this run's
 * compiled `main.js` (support/compiled-control.ts), which then needs its database named in `env`.
 */
export function controlProcess(
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
  from: ControlFrom = 'sources',
): ControlProcess {
  if (from === 'build') assertNamesItsDatabase(env);
  const child = spawn(process.execPath, [...nodeArgs, ...controlEntry('main', from)], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', LOG_FORMAT: 'json', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end();
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, out, err })),
  );
  const listening = new Promise<string>((resolve, reject) => {
    let seen = 0;
    child.stdout.on('data', () => {
      // Only the text since the last complete line needs looking at again.
      const m = /"url":"(http:\/\/[^"]+)","msg":"control plane listening"/.exec(out.slice(seen));
      if (m?.[1]) resolve(m[1]);
      seen = Math.max(seen, out.lastIndexOf('\n') + 1);
    });
    void exited.then((e) => reject(new Error(`control plane exited before listening (${e.code}): ${e.err}`)));
  });
  listening.catch(() => undefined);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  return { child, exited, listening, output: () => out, stderr: () => err, stop };
}

/** The JSON log lines a control process wrote at `level` or above (pino: 40 warn, 50 error, 60 fatal). */
export function logLinesAtLeast(output: string, level: number): string[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .filter((l) => (JSON.parse(l) as { level: number }).level >= level);
}
