import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../../', import.meta.url));

import { compiledControlFile, controlEntry, withoutSourceCondition } from '../../support/compiled-control.ts';
import { controlProcess as controlProcessFrom, type Exit } from '../../support/control-process.ts';

export type { Exit } from '../../support/control-process.ts';

/** A real control plane process, run from this run's compiled build (support/control-process.ts). */
export const controlProcess = (env: Record<string, string>, nodeArgs: readonly string[] = []) =>
  controlProcessFrom(env, nodeArgs, 'build');

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

/** The operator CLI (apps/control/src/cli.ts, from this run's build) as a real process; resolves how it ended. */
export function runCli(args: string[], env: Record<string, string>): Promise<Exit> {
  const child = spawn(process.execPath, [...controlEntry('cli', 'build'), ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, out, err })));
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/**
 * `npm start`'s supervision of its processes (supervised-product.mjs: without its install and builds)
 * on free ports and a new data directory, in a process group of its own, as a terminal's foreground
 * job: a signal sent to the group reaches it and its children. `stop()` SIGKILLs whatever of the group is left.
 */
export async function supervisedProduct(label: string, env: Record<string, string> = {}) {
  const [controlPort, webPort] = [await freePort(), await freePort()];
  const dataDir = join(mkdtempSync(join(tmpdir(), `sagaflow-r34-${label}-`)), 'pglite');
  // Its control plane runs from this run's build (its path the argument), without the source condition.
  const script = fileURLToPath(new URL('./supervised-product.mjs', import.meta.url));
  const child = spawn(process.execPath, [script, compiledControlFile('main')], {
    cwd: root,
    detached: true,
    env: {
      ...process.env,
      NODE_OPTIONS: withoutSourceCondition(process.env.NODE_OPTIONS),
      CONTROL_PORT: String(controlPort),
      WEB_PORT: String(webPort),
      SAGAFLOW_DATA_DIR: dataDir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    output: () => out,
    stop() {
      try {
        process.kill(-(child.pid ?? 0), 'SIGKILL');
      } catch {
        // already gone
      }
    },
  };
}
