import { existsSync, readFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';

import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';

import { findNatsServer } from './find-nats-server.ts';
import { startNatsServer } from './start-nats-server.ts';
import { TestNatsError } from './test-nats-error.ts';

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The real uid of `pid`, from /proc. */
function uidOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Uid:'));
  return Number(line?.split(/\s+/)[1]);
}

describe('startNatsServer', () => {
  it('serves JetStream on 127.0.0.1 as a non-root account, and stop closes the port and deletes the store', async () => {
    const server = await startNatsServer();
    try {
      expect(server.url).toBe(`nats://127.0.0.1:${server.port}`);
      expect(uidOf(server.pid)).not.toBe(0);
      const nc = await connect({ servers: server.url });
      const jsm = await jetstreamManager(nc);
      const info = await jsm.getAccountInfo();
      expect(info.streams).toBe(0);
      await nc.close();
      expect(existsSync(server.storeDir)).toBe(true);
    } finally {
      await server.stop();
    }
    expect(await accepts(server.port)).toBe(false);
    expect(existsSync(server.storeDir)).toBe(false);
    await expect(server.stop()).resolves.toBeUndefined();
  });

  it('two servers at once get different ports', async () => {
    const [a, b] = await Promise.all([startNatsServer(), startNatsServer()]);
    try {
      expect(a.port).not.toBe(b.port);
      expect(await accepts(a.port)).toBe(true);
      expect(await accepts(b.port)).toBe(true);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('without the binary says what to install and where it looked', () => {
    const error: unknown = (() => {
      try {
        return findNatsServer(['/nonexistent/nats-server']);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(TestNatsError);
    expect((error as TestNatsError).code).toBe('binary_missing');
    expect((error as TestNatsError).message).toContain('apt-get install -y nats-server');
    expect((error as TestNatsError).message).toContain('/nonexistent/nats-server');
  });
});
