import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migratedDataDir } from '../../support/migrated-data-dir.ts';
import { signInCookie, testPassword } from '../../support/test-plane.ts';
import { controlProcess, within } from './control-process.ts';

// `npm start` sends SIGTERM and SIGKILLs whatever still runs 15 s later (scripts/start.mjs, the
// `setTimeout(() => stopAll('SIGKILL'), 15_000)` of its signal handler); an orchestrator's grace
// period is typically 30 s. A clean stop must fit in that: README "One process owns the embedded
// database": "A clean stop (SIGINT/SIGTERM, `db.close()`) releases the lock at once."
const stopBound = 30_000;

describe('review 34: SIGTERM with a client that stalls mid-request', () => {
  it('the control plane still stops within the supervisor’s bound, exits 0 and frees the data directory', async () => {
    // A copy of a migrated directory (made once per process): a first start's initdb is not under test.
    const dataDir = await migratedDataDir('r34-stall');
    const plane = controlProcess({
      CONTROL_PORT: '0',
      SAGAFLOW_DATA_DIR: dataDir,
      SAGAFLOW_ADMIN_PASSWORD: testPassword,
    });
    const url = new URL(await plane.listening);
    const cookie = await signInCookie(url.origin, 'admin');

    // A client sends a request's headers and part of its body, then goes quiet (a slow or dead
    // peer). The server's `100 Continue` is the proof it has taken the request in.
    const socket = connect(Number(url.port), url.hostname);
    socket.on('error', () => undefined);
    const closedByServer = new Promise<void>((r) => socket.once('close', () => r()));
    let answer = '';
    const continued = new Promise<void>((resolve) =>
      socket.on('data', (d: Buffer) => {
        answer += d.toString();
        if (answer.includes('100 Continue')) resolve();
      }),
    );
    socket.write(
      'POST /trpc/runs.start HTTP/1.1\r\n' +
        `Host: ${url.host}\r\n` +
        'Content-Type: application/json\r\n' +
        `Cookie: ${cookie}\r\n` +
        'Content-Length: 1000\r\n' +
        'Expect: 100-continue\r\n\r\n',
    );
    await continued;
    socket.write('{"flowName":');

    const signalled = Date.now();
    plane.child.kill('SIGTERM');
    const exit = await within(plane.exited, stopBound);
    const tookMs = Date.now() - signalled;
    if (!exit) plane.child.kill('SIGKILL');
    socket.destroy();
    expect(exit, `still running ${tookMs} ms after SIGTERM, held by one stalled request`).not.toBeNull();
    expect(exit?.code).toBe(0);
    await closedByServer;
    expect(existsSync(join(dataDir, 'sagaflow.lock')), 'the lock is released').toBe(false);
  }, 180_000);
});
