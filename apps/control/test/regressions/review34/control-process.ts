import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../../', import.meta.url));

export interface Exit {
  code: number | null;
  signal: string | null;
  out: string;
  err: string;
}

/**
 * A real control plane process (node + tsx on apps/control/src/main.ts, so its pid holds the data
 * directory's lock). `listening` resolves its URL once it logs that it listens; it rejects if the
 * process ends first.
 */
export function controlProcess(env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    ['--conditions=@sagaflow/source', '--import', 'tsx', 'apps/control/src/main.ts'],
    {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', LOG_FORMAT: 'json', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, out, err })),
  );
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const m = /"url":"(http:\/\/[^"]+)","msg":"control plane listening"/.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    void exited.then((e) => reject(new Error(`control plane exited before listening (${e.code}): ${e.err}`)));
  });
  listening.catch(() => undefined);
  return { child, exited, listening, output: () => out };
}

/** Polls until `check` answers; the test's own timeout is the only deadline (a loaded machine is slow). */
export const until = async <T>(check: () => Promise<T | undefined>): Promise<T> => {
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
};

/** Resolves `null` if `p` has not settled within `ms`. */
export const within = <T>(p: Promise<T>, ms: number): Promise<T | null> =>
  Promise.race([p, new Promise<null>((r) => setTimeout(() => r(null), ms).unref())]);

/** The operator CLI (apps/control/src/cli.ts) as a real process; resolves how it ended. */
export function runCli(args: string[], env: Record<string, string>): Promise<Exit> {
  const child = spawn(
    process.execPath,
    ['--conditions=@sagaflow/source', '--import', 'tsx', 'apps/control/src/cli.ts', ...args],
    {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, out, err })));
}
