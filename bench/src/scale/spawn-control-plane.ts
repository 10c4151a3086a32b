import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  buildControl,
  controlEntry,
  controlNodeFlags,
  controlProcessEnv,
} from '../../../scripts/lib/control-build.mjs';
import { withoutSourceCondition } from '../../../scripts/lib/source-condition.mjs';

const controlDir = fileURLToPath(new URL('../../../apps/control/', import.meta.url));

/** A control plane in its own process (node runs it directly, so `pid` is the plane's own). */
export interface SpawnedControlPlane {
  url: string;
  pid: number;
  /** The process's resident set now (VmRSS), in MB. */
  rssMb(): number;
  /** The process's peak resident set so far (VmHWM), in MB. */
  peakRssMb(): number;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** One of the process's memory figures in /proc (`VmRSS`, `VmHWM`), in MB. */
function readStatusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return line?.[1] ? Number(line[1]) / 1024 : Number.NaN;
}

async function waitForHealth(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the control plane exited (${child.exitCode}) before answering`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the control plane did not answer ${url}/healthz within ${timeoutMs} ms`);
}

/**
 * Starts `apps/control` as `npm start` runs it in production (built first, then its JavaScript under
 * plain node with its default loops; ADR 0044), on a free port, against `databaseUrl`, with `env`
 * (the caller's environment and settings, less the source condition the workspace's TypeScript runs
 * under); resolves once /healthz answers.
 */
export async function spawnControlPlane(databaseUrl: string, env: NodeJS.ProcessEnv): Promise<SpawnedControlPlane> {
  const built = await buildControl();
  if (built !== 0) throw new Error(`the control plane build failed (exit ${built}); see its output above`);
  const port = await freePort();
  const nodeOptions = withoutSourceCondition(env.NODE_OPTIONS);
  const child = spawn(process.execPath, [...controlNodeFlags(env), controlEntry], {
    cwd: controlDir,
    env: {
      LOG_LEVEL: 'warn',
      ...controlProcessEnv(env),
      ...env,
      NODE_OPTIONS: nodeOptions,
      DATABASE_URL: databaseUrl,
      CONTROL_PORT: String(port),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitForHealth(url, child, 120_000);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  const pid = child.pid ?? Number.NaN;
  return {
    url,
    pid,
    rssMb: () => readStatusMb(pid, 'VmRSS'),
    peakRssMb: () => readStatusMb(pid, 'VmHWM'),
    async stop() {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
