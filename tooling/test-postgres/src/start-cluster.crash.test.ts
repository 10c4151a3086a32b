import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';

import { describe, expect, it } from 'vitest';

import { startCluster } from './start-cluster.ts';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Runs test/start-cluster-then-wait.ts and resolves once its cluster is up. */
async function spawnClusterOwner(): Promise<{ child: ChildProcess; port: number; dataDir: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/start-cluster-then-wait.ts'], {
    cwd: packageDir,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let output = '';
  for await (const chunk of child.stdout) {
    output += String(chunk);
    if (output.includes('\n')) break;
  }
  const started = JSON.parse(output) as { port: number; dataDir: string };
  return { child, ...started };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('clusters do not outlive the process that started them', () => {
  it('SIGTERM to the owner stops its cluster and deletes its directory before the owner dies', async () => {
    const { child, port, dataDir } = await spawnClusterOwner();
    expect(await accepts(port)).toBe(true);

    child.kill('SIGTERM');
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];

    expect({ code, signal }).toEqual({ code: null, signal: 'SIGTERM' });
    expect(await accepts(port)).toBe(false);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('a cluster whose owner was SIGKILLed is reaped by the next startCluster', async () => {
    const { child, port, dataDir } = await spawnClusterOwner();
    child.kill('SIGKILL');
    await once(child, 'exit');
    // Nothing ran in the owner, so its postmaster is orphaned. Not asserted: a startCluster in any
    // other process (a parallel test file) may reap it first, which is the guarantee itself.

    const next = await startCluster();
    try {
      expect(await accepts(port)).toBe(false);
      expect(existsSync(dirname(dataDir))).toBe(false);
    } finally {
      await next.stop();
    }
  });
});
