// `npm start`'s process supervision (scripts/lib/supervise.mjs) over a real control plane, run from the
// compiled `main.js` given as the argument (the tests' build, as `npm start` runs its build, ADR 0044), on
// an embedded data directory, and a small HTTP server in the console's place: the
// suite's own console build runs beside the tests, so a second `next build` (and `npm start`'s
// install and Prisma generate) must not run in the same checkout (ADR 0109's addendum).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { supervise } from '../../../../../scripts/lib/supervise.mjs';

const root = fileURLToPath(new URL('../../../../../', import.meta.url));
const host = '127.0.0.1';
const { CONTROL_PORT: controlPort, WEB_PORT: webPort } = process.env;
const controlMain = process.argv[2];
if (!controlMain?.endsWith('.js')) throw new Error('usage: supervised-product.mjs <compiled main.js>');

const product = supervise();
const control = product.add(
  spawn(process.execPath, [controlMain], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, SAGAFLOW_DEMO: '1', LOG_FORMAT: 'json', CONTROL_HOST: host },
  }),
);
await product.waitForHttp(`http://${host}:${controlPort}/healthz`, 'the control plane', control);

const consoleServer = `require('node:http').createServer((q, s) => s.end('console')).listen(${Number(webPort)}, '${host}')`;
const web = product.add(spawn(process.execPath, ['-e', consoleServer], { stdio: 'inherit' }));
await product.waitForHttp(`http://${host}:${webPort}/runs`, 'the console', web);

console.error('[sagaflow] the product is running; Ctrl-C stops it.');
await product.untilStopped();
