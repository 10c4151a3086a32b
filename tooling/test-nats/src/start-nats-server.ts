import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { findNatsServer } from './find-nats-server.ts';
import type { NatsServer, StartNatsServerOptions } from './nats-server.ts';
import { resolveRunAs } from './resolve-run-as.ts';
import type { RunAs } from './resolve-run-as.ts';
import { destroyServerDirSync, reapStaleServers, serverDir, serverDirPrefix } from './server-dir.ts';
import type { ServerDir } from './server-dir.ts';
import { freePort, stopOnExit } from '@sagaflow/test-process';
import { TestNatsError } from './test-nats-error.ts';

const host = '127.0.0.1';
const maxPortAttempts = 5;
const stopGraceMs = 5_000;

/**
 * Starts a throwaway `nats-server -js` from the machine's binary: a fresh JetStream store under
 * `os.tmpdir()`, a free port on 127.0.0.1, no auth. When this process is root the server runs as
 * `nats` (or `nobody`) through `runuser`, in a directory that account owns. It is stopped and its
 * store deleted when this process exits; servers left by killed processes are reaped at the next start.
 *
 * @example
 * const server = await startNatsServer();
 * const nc = await connect({ servers: server.url });
 * // ... jetstreamManager(nc), jetstream(nc) ...
 * await nc.close();
 * await server.stop();
 */
export async function startNatsServer(opts: StartNatsServerOptions = {}): Promise<NatsServer> {
  const log = opts.log ?? (() => {});
  const binary = opts.binary ?? findNatsServer();
  const runAs = resolveRunAs();
  await reapStaleServers(log);

  const layout = serverDir(await mkdtemp(join(tmpdir(), serverDirPrefix)));
  await writeFile(layout.ownerPidFile, `${process.pid}\n`);
  const cancelStopOnExit = stopOnExit(() => destroyServerDirSync(layout));
  try {
    await mkdir(layout.storeDir);
    if (runAs !== undefined) {
      await chown(layout.dir, runAs.uid, runAs.gid);
      await chown(layout.storeDir, runAs.uid, runAs.gid);
    }
    const started = await startOnFreePort(binary, layout, runAs, opts.readyTimeoutMs ?? 30_000, log);
    log(`nats-server ${started.pid} listening on ${host}:${started.port} as ${runAs?.user ?? 'the current user'}`);
    let stopping: Promise<void> | undefined;
    return {
      host,
      port: started.port,
      url: `nats://${host}:${started.port}`,
      pid: started.pid,
      user: runAs?.user ?? String(process.getuid?.() ?? 'unknown'),
      storeDir: layout.storeDir,
      output: started.output,
      stop() {
        stopping ??= stopServer(started.child, started.pid, layout).finally(cancelStopOnExit);
        return stopping;
      },
    };
  } catch (error) {
    destroyServerDirSync(layout);
    cancelStopOnExit();
    throw error;
  }
}

interface Started {
  child: ChildProcess;
  port: number;
  pid: number;
  output: () => string;
}

async function startOnFreePort(
  binary: string,
  layout: ServerDir,
  runAs: RunAs | undefined,
  readyTimeoutMs: number,
  log: (line: string) => void,
): Promise<Started> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort(host);
    const args = ['-js', '-a', host, '-p', String(port), '-sd', layout.storeDir, '-P', layout.serverPidFile];
    const [command, argv] =
      runAs === undefined ? [binary, args] : ['runuser', ['-u', runAs.user, '--', binary, ...args]];
    const child = spawn(command, argv, { cwd: layout.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const outcome = await waitUntilReady(child, () => output, readyTimeoutMs);
    if (outcome === 'ready') {
      const pid = Number((await readFile(layout.serverPidFile, 'utf8')).trim());
      return { child, port, pid, output: () => output };
    }
    child.kill('SIGKILL');
    const portTaken = /address already in use/i.test(output);
    if (portTaken && attempt < maxPortAttempts) {
      log(`port ${port} was taken before nats-server could bind it; retrying with another port`);
      continue;
    }
    throw new TestNatsError(
      'start_failed',
      `nats-server did not become ready on ${host}:${port} (${outcome}, attempt ${attempt}). Its output:\n` +
        `${output.trim() === '' ? '(empty)' : output.trim()}\n` +
        (outcome === 'spawn_failed' && runAs !== undefined
          ? '`runuser` (util-linux) must be on PATH to run the server as a non-root user.'
          : 'Fix the cause shown above (permissions on the store directory, disk space) and run again.'),
    );
  }
}

/** "Server is ready" is the line nats-server prints once it accepts clients (JetStream included). */
async function waitUntilReady(
  child: ChildProcess,
  output: () => string,
  timeoutMs: number,
): Promise<'ready' | 'exited' | 'timed_out' | 'spawn_failed'> {
  let exited: 'exited' | 'spawn_failed' | undefined;
  child.once('exit', () => (exited ??= 'exited'));
  child.once('error', () => (exited = 'spawn_failed'));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (output().includes('Server is ready')) return 'ready';
    if (exited !== undefined) return exited;
    await sleep(25);
  }
  return 'timed_out';
}

async function stopServer(child: ChildProcess, pid: number, layout: ServerDir): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit');
    signal(pid, 'SIGTERM');
    const graceful = await Promise.race([exited.then(() => true), sleep(stopGraceMs).then(() => false)]);
    if (!graceful) {
      signal(pid, 'SIGKILL');
      child.kill('SIGKILL');
      await exited;
    }
  }
  await rm(layout.dir, { recursive: true, force: true, maxRetries: 3 });
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}
