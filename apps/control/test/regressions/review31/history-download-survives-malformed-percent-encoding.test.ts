import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { testDatabaseUrl } from '../../support/test-plane.ts';
import { controlEntry } from '../../support/compiled-control.ts';

const root = fileURLToPath(new URL('../../../../../', import.meta.url));

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** GET with a deadline: a hung request answers status 0 instead of waiting forever. */
async function get(url: string, ms = 5000): Promise<{ status: number; body: string }> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(ms) });
    return { status: res.status, body: await res.text() };
  } catch (err) {
    return { status: 0, body: String(err) };
  }
}

/**
 * The real control-plane process (main.ts), so an error nothing catches is seen as what it is in
 * production: Node ends a process on an unhandled rejection.
 */
describe('GET /history/<kind>/<id> with a malformed percent-encoding (no session at all)', () => {
  let child: ChildProcess;
  let base = '';
  let exited: { code: number | null; signal: string | null } | null = null;
  let stderr = '';
  beforeAll(async () => {
    const url = await testDatabaseUrl('r31_history_pct');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, controlEntry('main', 'build'), {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        LOG_LEVEL: 'silent',
        DATABASE_URL: url,
        CONTROL_HOST: '127.0.0.1',
        CONTROL_PORT: String(port),
        SAGAFLOW_ADMIN_PASSWORD: 'a long enough admin password',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code, signal) => (exited = { code, signal }));
    for (let i = 0; i < 600; i++) {
      if ((await get(`${base}/healthz`, 1000)).status === 200) return;
      if (exited) break;
      await sleep(100);
    }
    throw new Error(`the control plane did not start: ${JSON.stringify(exited)} ${stderr}`);
  });
  afterAll(async () => {
    if (!exited && child.pid !== undefined) {
      child.kill('SIGTERM');
      for (let i = 0; i < 100 && !exited; i++) await sleep(100);
      if (!exited) child.kill('SIGKILL');
    }
  });

  it('is answered with a 4xx, and the control plane keeps running', async () => {
    const answer = await get(`${base}/history/runs/%E0%A4%A`);
    const health = await get(`${base}/healthz`, 2000);
    // A process that went down has said so by now; its last words name the cause.
    for (let i = 0; i < 20 && health.status !== 200 && !exited; i++) await sleep(100);
    expect(
      { answer: answer.status >= 400 && answer.status < 500, health: health.status, exited },
      stderr.split('\n').slice(0, 8).join('\n'),
    ).toEqual({ answer: true, health: 200, exited: null });
    expect(answer.body).not.toMatch(/URIError|at .*\.ts:\d+/);
  });
});
