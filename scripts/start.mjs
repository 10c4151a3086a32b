// `npm start`: set up and run the whole product on the embedded database, with demo traffic.
// Needs only Node 20 and npm: it installs the pinned pnpm, the dependencies, generates the Prisma
// client, builds the console and the control plane, then starts the control plane (which migrates
// the embedded database) and the console, and prints the URL. Ctrl-C stops both.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { buildControl, controlEntry, controlNodeFlags, controlProcessEnv } from './lib/control-build.mjs';
import { demoAdminPassword } from './lib/demo-admin-password.mjs';
import { root } from './lib/ensure-pnpm.mjs';
import { prepare } from './lib/prepare.mjs';
import { step } from './lib/run.mjs';
import { withoutSourceCondition } from './lib/source-condition.mjs';
import { forwardWithoutGreeting, startBanner } from './lib/start-banner.mjs';
import { buildWeb } from './lib/web-build.mjs';

const host = process.env.SAGAFLOW_HOST ?? '127.0.0.1';
const controlPort = Number(process.env.CONTROL_PORT ?? 4000);
const webPort = Number(process.env.WEB_PORT ?? 3000);

async function assertFree(name, port) {
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    fail(`${name} must be a port number between 1 and 65535, got "${port}"`);
  await new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err) =>
      fail(
        `${name} ${port} on ${host} is not available (${err.code}); stop what is using it or set ${name} to a free port`,
      ),
    );
    probe.listen(port, host, () => probe.close(resolve));
  });
}

function fail(message) {
  console.error(`[sagaflow] ${message}`);
  process.exit(1);
}

// A child has ended when it exited with a code or was ended by a signal (then exitCode stays null).
const hasEnded = (c) => c.exitCode !== null || c.signalCode !== null;
const exited = (c) => new Promise((r) => (hasEnded(c) ? r() : c.once('exit', () => r())));

async function waitForHttp(url, what, child, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  let dots = 0;
  while (Date.now() < deadline) {
    // A Ctrl-C during start-up: the signal handler has asked the children to stop; wait for them, end.
    if (stopping) await stopped();
    if (hasEnded(child))
      fail(
        `${what} exited during start-up (${child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode}); see its output above`,
      );
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (++dots % 10 === 0)
      console.error(`[sagaflow] waiting for ${what}… (${Math.round((timeoutMs - (deadline - Date.now())) / 1000)}s)`);
    await new Promise((r) => setTimeout(r, 500));
  }
  fail(`${what} did not answer at ${url} within ${timeoutMs / 1000}s`);
}

let controlFlags;
try {
  controlFlags = controlNodeFlags();
} catch (err) {
  fail(err.message);
}
await assertFree('CONTROL_PORT', controlPort);
await assertFree('WEB_PORT', webPort);
const { pnpm, env } = await prepare();
const built = await step('build the console (Next.js)', () => buildWeb(pnpm, env));
if (!built.ok) fail('the console build failed; see the errors above');
const controlBuilt = await step('build the control plane (JavaScript)', () => buildControl());
if (!controlBuilt.ok) fail('the control plane build failed; see the errors above');

const children = [];
const stopAll = (signal) => {
  for (const c of children) if (!hasEnded(c)) c.kill(signal);
};
let stopping = false;
/** Once stopping: waits for every child to end, then exits 0. */
async function stopped() {
  await Promise.all(children.map(exited));
  console.error('[sagaflow] stopped');
  process.exit(0);
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    console.error(`\n[sagaflow] stopping (${sig})…`);
    stopAll('SIGTERM');
    setTimeout(() => stopAll('SIGKILL'), 15_000).unref();
  });
}

// The control plane runs from its build (plain node, no loader): tsx's loader thread, esbuild and
// the modules' transpiled sources cost ~60 MB of resident memory; its old space is capped so that
// V8 keeps less garbage between full collections, and its malloc arenas so that memory freed by
// background compilations is reused (ADR 0044). The sources run directly with
// `pnpm --filter @sagaflow/control run dev`.
// The product requires sign-in; the demo makes it easy: a known first-admin password, printed below.
const admin = demoAdminPassword();
const control = spawn(process.execPath, [...controlFlags, controlEntry], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...controlProcessEnv(env),
    SAGAFLOW_DEMO: '1',
    ...env,
    // A shell that exports the workspace's source condition must not send the build back to src/.
    NODE_OPTIONS: withoutSourceCondition(env.NODE_OPTIONS),
    SAGAFLOW_ADMIN_PASSWORD: admin.password,
    CONTROL_HOST: host,
    CONTROL_PORT: String(controlPort),
  },
});
children.push(control);
await step('start the control plane (embedded PGlite, demo traffic)', async () => {
  await waitForHttp(`http://${host}:${controlPort}/healthz`, 'the control plane', control);
  return 0;
});

const web = spawn(process.execPath, ['serve.mjs', '-p', String(webPort), '-H', host], {
  cwd: join(root, 'apps', 'web'),
  stdio: ['ignore', 'pipe', 'pipe'],
  env: {
    ...env,
    CONTROL_URL: `http://${host}:${controlPort}`,
    // The console answers to the loopback names and to the address it was asked to listen on.
    CONSOLE_ALLOWED_HOSTS:
      env.CONSOLE_ALLOWED_HOSTS ?? ['127.0.0.1', 'localhost', '::1', ...(host === '0.0.0.0' ? [] : [host])].join(','),
  },
});
children.push(web);
forwardWithoutGreeting(web.stdout, process.stdout);
forwardWithoutGreeting(web.stderr, process.stderr);
await step('start the console', async () => {
  await waitForHttp(`http://${host}:${webPort}/runs`, 'the console', web);
  return 0;
});

console.error(startBanner({ consoleUrl: `http://${host}:${webPort}`, admin, root }));

await Promise.race(children.map(exited));
const unexpected = !stopping;
stopping = true;
stopAll('SIGTERM');
await Promise.all(children.map(exited));
if (unexpected) fail('a process stopped unexpectedly; see its output above');
console.error('[sagaflow] stopped');
process.exit(0);
