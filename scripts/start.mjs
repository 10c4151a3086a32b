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
import { supervise } from './lib/supervise.mjs';
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

const product = supervise();

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
product.add(control);
await step('start the control plane (embedded PGlite, demo traffic)', async () => {
  await product.waitForHttp(`http://${host}:${controlPort}/healthz`, 'the control plane', control);
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
product.add(web);
forwardWithoutGreeting(web.stdout, process.stdout);
forwardWithoutGreeting(web.stderr, process.stderr);
await step('start the console', async () => {
  await product.waitForHttp(`http://${host}:${webPort}/runs`, 'the console', web);
  return 0;
});

console.error(startBanner({ consoleUrl: `http://${host}:${webPort}`, admin, root }));

await product.untilStopped();
