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

// scripts/start.mjs, its last lines: when a child ends, it stops the other and fails with "a process
// stopped unexpectedly; see its output above". Its `exited` helper tests `c.exitCode !== null`, which
// a death by signal (the OOM killer's SIGKILL) never sets; by then that child's 'exit' has been
// emitted, so `await Promise.all(children.map(exited))` waits for an event that never comes again:
// once the console has stopped nothing keeps the event loop alive and Node ends the script with 13
// ("unsettled top-level await") instead of the script's own message and exit 1.
describe('review 34: `npm start` when its running control plane is SIGKILLed (e.g. by the OOM killer)', () => {
  it('npm start stops the console and exits non-zero, saying a process stopped unexpectedly', async () => {
    const [controlPort, webPort] = [await freePort(), await freePort()];
    const dataDir = join(mkdtempSync(join(tmpdir(), 'sagaflow-r34-npm-killed-')), 'pglite');
    const start = spawn(process.execPath, [supervisedProduct], {
      cwd: root,
      detached: true,
      env: { ...process.env, CONTROL_PORT: String(controlPort), WEB_PORT: String(webPort), SAGAFLOW_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    start.stdout.on('data', (d: Buffer) => (out += d.toString()));
    start.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => start.once('exit', (code) => resolve(code)));
    try {
      // Progress: both are up (the banner), and the control plane has logged its pid.
      await until(async () => (out.includes('Ctrl-C stops it') ? true : undefined));
      const m = /"pid":(\d+),"hostname":"[^"]*","name":"sagaflow-control"/.exec(out);
      expect(m, 'the control plane logged its pid').not.toBeNull();
      process.kill(Number(m?.[1]), 'SIGKILL');
      const code = await within(exited, 30_000);
      // null: still running 30 s later; 13: Node's exit for a top-level await that can never settle.
      expect({ code, said: out.includes('a process stopped unexpectedly') }, out.slice(-400)).toEqual({
        code: 1,
        said: true,
      });
    } finally {
      try {
        process.kill(-(start.pid ?? 0), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }, 600_000);
});
