import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiClient, signInCookie, testPassword } from '../../support/test-plane.ts';
import { controlProcess, until } from './control-process.ts';
import { migratedDataDir } from '../../support/migrated-data-dir.ts';

const planeEnv = (dataDir: string) => ({
  CONTROL_PORT: '0',
  SAGAFLOW_DATA_DIR: dataDir,
  SAGAFLOW_ADMIN_PASSWORD: testPassword,
  // A forced exit's jobs come back after 2 s and its steps are reclaimable 3 s after its last heartbeat,
  // instead of a minute and 30 s: the successor's runs complete without waiting out the defaults.
  SAGAFLOW_ENGINE_CONFIG: JSON.stringify({
    worker: { lease_seconds: 2, heartbeat_interval_ms: 500, dead_after_seconds: 3 },
  }),
  SAGAFLOW_MONITOR_INTERVAL_MS: '1000',
});

// apps/control/src/main.ts (shutdown): "a second signal close behind the first is the same request.
// A later one forces the exit." README: a clean stop releases the lock; ADR 0014: a killed holder's
// lock is taken over at once on the same host and its successor sees every committed run.
describe('review 34: a second signal during shutdown', () => {
  it('held: SIGINT right behind SIGTERM (a terminal’s Ctrl-C reaching the plane and its supervisor) is one clean stop: exit 0, lock released', async () => {
    const dataDir = await migratedDataDir('r34-twice');
    const plane = controlProcess(planeEnv(dataDir));
    await plane.listening;
    plane.child.kill('SIGTERM');
    plane.child.kill('SIGINT');
    expect((await plane.exited).code).toBe(0);
    expect(existsSync(join(dataDir, 'sagaflow.lock'))).toBe(false);
  }, 300_000);

  it('held: a later second signal forces the exit mid-stop; the next start takes the directory over with every acknowledged run, and they complete', async () => {
    const dataDir = await migratedDataDir('r34-forced');
    const plane = controlProcess(planeEnv(dataDir));
    const url = new URL(await plane.listening);
    const cookie = await signInCookie(url.origin, 'admin');
    const api = apiClient(url.origin, cookie);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++)
      ids.push(
        (await api.runs.start.mutate({ flowName: 'demo.order', input: { orderId: `f-${i}`, amount: 1 } })).runId,
      );

    // A stalled request keeps the stop from finishing, so the second signal lands mid-stop.
    const socket = connect(Number(url.port), url.hostname);
    socket.on('error', () => undefined);
    const continued = new Promise<void>((resolve) =>
      socket.on('data', (d: Buffer) => (d.toString().includes('100 Continue') ? resolve() : undefined)),
    );
    socket.write(
      `POST /trpc/runs.start HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n` +
        `Cookie: ${cookie}\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n`,
    );
    await continued;
    plane.child.kill('SIGTERM');
    await until(async () => (/"msg":"shutting down"/.test(plane.output()) ? true : undefined));
    // main.ts's own rule: a signal more than 2 s after the first forces the exit.
    await new Promise((r) => setTimeout(r, 2500));
    plane.child.kill('SIGTERM');
    const forced = await plane.exited;
    socket.destroy();
    expect(forced.code).toBe(1);

    const next = controlProcess(planeEnv(dataDir));
    const url2 = await next.listening;
    const api2 = apiClient(url2, await signInCookie(url2, 'admin'));
    try {
      for (const id of ids)
        await until(async () => ((await api2.runs.get.query({ id })).run.status === 'Completed' ? true : undefined));
      expect((await fetch(`${url2}/readyz`)).status).toBe(200);
    } finally {
      next.child.kill('SIGTERM');
    }
    expect((await next.exited).code).toBe(0);
  }, 300_000);
});
