import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { until, within } from './control-process.ts';

const root = fileURLToPath(new URL('../../../../../', import.meta.url));
/** `npm start`'s supervision of its processes, without its install and builds (see the file). */
const supervisedProduct = fileURLToPath(new URL('./supervised-product.mjs', import.meta.url));

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

// README: "Ctrl-C stops both." scripts/start.mjs: on SIGINT/SIGTERM it sends SIGTERM to its children
// and SIGKILLs them 15 s later; so `npm start` should be gone well within 30 s of a Ctrl-C. Its wait
// for the control plane (waitForHttp) stops early only on `child.exitCode !== null`; a control plane
// that a Ctrl-C ends during start-up dies by the signal (exitCode null, signalCode set), and the
// wait polls on for its whole 120 s.
describe('review 34: Ctrl-C while `npm start` is starting the control plane', () => {
  it('npm start stops within 30 s instead of waiting out its 120 s start-up deadline', async () => {
    const [controlPort, webPort] = [await freePort(), await freePort()];
    const dataDir = join(mkdtempSync(join(tmpdir(), 'sagaflow-r34-npm-start-')), 'pglite');
    // Its own process group, as a terminal's foreground job: the Ctrl-C reaches it and the control plane.
    const start = spawn(process.execPath, [supervisedProduct], {
      cwd: root,
      detached: true,
      env: {
        ...process.env,
        CONTROL_PORT: String(controlPort),
        WEB_PORT: String(webPort),
        SAGAFLOW_DATA_DIR: dataDir,
        LOG_LEVEL: 'debug',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    start.stdout.on('data', (d: Buffer) => (out += d.toString()));
    start.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => start.once('exit', (code) => resolve(code)));
    try {
      // Progress: the control plane holds the data directory and is migrating it.
      await until(async () => (/"status":"applying"/.test(out) ? true : undefined));
      const pid = start.pid ?? 0;
      process.kill(-pid, 'SIGINT');
      const signalled = Date.now();
      const code = await within(exited, 30_000);
      const tookMs = Date.now() - signalled;
      expect(out, 'the Ctrl-C landed during start-up').not.toContain('control plane listening');
      expect(code, `npm start still running ${tookMs} ms after Ctrl-C:\n${out.slice(-600)}`).not.toBeNull();
    } finally {
      if (start.exitCode === null && start.signalCode === null) {
        try {
          process.kill(-(start.pid ?? 0), 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  }, 600_000);
});
