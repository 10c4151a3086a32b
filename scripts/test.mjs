// `npm test`: every test. Typecheck, lint, unit tests, the engine suite on PGlite and on a real
// PostgreSQL 15 (started by the test harness from the machine's binaries), the control plane's
// tests, then the console's Playwright e2e in Debian's Chromium against the built app.
// Every step runs even when an earlier one failed, so one run shows everything that is wrong.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from './lib/ensure-pnpm.mjs';
import { prepare } from './lib/prepare.mjs';
import { niced, restorePriority, run, runCaptured, showHeld, step, stepsHeld } from './lib/run.mjs';
import { fromRoot, unhandledErrorFailures } from './lib/unhandled-errors.mjs';
import { buildWeb } from './lib/web-build.mjs';

const bin = (name) => join(root, 'node_modules', '.bin', name);
const { pnpm, env } = await prepare();
const reports = mkdtempSync(join(tmpdir(), 'sagaflow-test-'));
const vitestJson = join(reports, 'vitest.json');
const playwrightJson = join(reports, 'playwright.json');
const vitestUnhandled = join(reports, 'vitest-unhandled.jsonl');

const preflight = [];
if (!existsSync('/usr/lib/postgresql/15/bin/initdb') && !process.env.DATABASE_URL) {
  preflight.push(
    'PostgreSQL 15 binaries are missing (/usr/lib/postgresql/15/bin): install them with `apt-get install -y postgresql`, or set DATABASE_URL to a server the tests may use.',
  );
}
if (!existsSync('/usr/sbin/nats-server') && !existsSync('/usr/bin/nats-server')) {
  preflight.push(
    'nats-server is missing (/usr/sbin/nats-server): install it with `apt-get install -y nats-server` (the outbox broker tests start it).',
  );
}
if (!existsSync('/usr/lib/chromium/chromium-headless-shell') && !process.env.CHROMIUM_PATH) {
  preflight.push(
    "Chromium's headless shell is missing (/usr/lib/chromium/chromium-headless-shell): install it with `apt-get install -y chromium-headless-shell` (Playwright downloads do not work here), or set CHROMIUM_PATH.",
  );
}
for (const p of preflight) console.error(`[sagaflow] ${p}`);

const results = [];
/**
 * The console's build and then the static checks (side by side, ADR 0086) run at a lower priority beside
 * vitest, their output held until the end (ADR 0096). Vitest's files mostly wait on databases and child
 * processes, leaving part of both cores idle: the build and the checks fill it, and give the cores back
 * whenever a test wants them. The build goes first (ADR 0096's addendum): `next build` rewrites
 * `next-env.d.ts` and `.next/types`, which the typecheck and the lint of `apps/web` read, so the two never
 * overlap; and the e2e, which needs only the build, starts as soon as vitest has ended while whatever of the
 * checks is left goes on, still niced, beside it. The build skips its own type check: the typecheck step
 * checks the console's files (and the types the build generated), and fails the run when they are wrong.
 */
const lanePids = new Set();
let lowPriority = true;
const laneCommand = (cmd, args) => (lowPriority ? niced(cmd, args) : { cmd, args });
const runHeld = (output) => async (cmd, args, opts) => {
  const n = laneCommand(cmd, args);
  const r = await runCaptured(n.cmd, n.args, opts, (pid) => lanePids.add(pid));
  output.push(r.output);
  return r.code;
};
const building = (async () => {
  const started = Date.now();
  const output = [];
  const code = await buildWeb(pnpm, { ...env, SAGAFLOW_CONSOLE_TYPES_CHECKED: '1' }, { runCommand: runHeld(output) });
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  return { title: 'build the console', ok: code === 0, secs, output: output.join('') };
})();
const checking = building.then(() =>
  Promise.all(
    stepsHeld(
      [
        { title: 'typecheck', cmd: process.execPath, args: [join(root, 'scripts', 'typecheck.mjs')] },
        { title: 'lint (eslint)', cmd: bin('eslint'), args: ['.', '--max-warnings=0'] },
        { title: 'format (prettier --check)', cmd: bin('prettier'), args: ['--check', '.', '--log-level=warn'] },
      ].map((s) => ({ title: s.title, ...laneCommand(s.cmd, s.args), opts: { cwd: root, env } })),
      (pid) => lanePids.add(pid),
    ),
  ),
);
console.error(
  '\n[sagaflow] the console build, then typecheck, lint and format, run beside vitest at a lower priority;',
);
console.error("[sagaflow] their output follows the tests'.");
const tests = await step('unit + integration tests (vitest: PGlite and PostgreSQL 15)', () =>
  run(bin('vitest'), ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${vitestJson}`], {
    cwd: root,
    env: { ...env, SAGAFLOW_VITEST_UNHANDLED: vitestUnhandled },
  }),
);
const waitedFrom = Date.now();
const built = await building;
const waited = (Date.now() - waitedFrom) / 1000;
if (waited > 1) console.error(`\n[sagaflow] waited ${waited.toFixed(1)}s after vitest for the console build`);
let e2e = null;
if (built.ok) {
  e2e = await step('e2e (Playwright, Chromium)', () =>
    run(pnpm, ['exec', 'playwright', 'test'], {
      cwd: join(root, 'e2e'),
      env: { ...env, PLAYWRIGHT_JSON_OUTPUT_NAME: playwrightJson, SAGAFLOW_E2E_JSON: playwrightJson },
    }),
  );
}
// Whatever of the checks still runs goes back to normal priority once nothing else wants the cores.
lowPriority = false;
restorePriority(lanePids);
const checkedFrom = Date.now();
const checked = await checking;
if (Date.now() - checkedFrom > 1000)
  console.error(`\n[sagaflow] waited ${((Date.now() - checkedFrom) / 1000).toFixed(1)}s at the end for the checks`);
for (const r of [built, ...checked]) showHeld(r);
results.push(...checked.map(({ title, ok, secs }) => ({ title, ok, secs })), tests);
results.push({ title: built.title, ok: built.ok, secs: built.secs });
if (e2e) results.push(e2e);

let passed = 0;
let failed = 0;
/**
 * Each failed test by name with the head of its error, repeated after the runners' long output so the end
 * of the log says what broke. A Prisma error opens with a blank line and says its cause last, so the head is
 * the message's first non-blank lines, not the first line alone.
 */
const failures = [];
const errorHead = (text) => {
  const lines = String(text ?? '')
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '' && !/^\s+at /.test(l));
  const head = lines.slice(0, 12).map((l) => (l.length > 240 ? `${l.slice(0, 240)}…` : l));
  // Where it was thrown: the first stack frame in the project's own files.
  const frame = String(text ?? '')
    .split('\n')
    .find((l) => /^\s+at /.test(l) && !l.includes('node_modules') && !l.includes('node:'));
  if (frame) head.push(frame.trim());
  return head.join('\n      ');
};
try {
  const v = JSON.parse(readFileSync(vitestJson, 'utf8'));
  passed += v.numPassedTests;
  failed += v.numFailedTests;
  for (const file of v.testResults ?? []) {
    const rel = fromRoot(file.name, root);
    const failedTests = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
    for (const t of failedTests) failures.push(`vitest ${rel} › ${t.fullName}: ${errorHead(t.failureMessages?.[0])}`);
    if (failedTests.length === 0 && file.status === 'failed')
      failures.push(`vitest ${rel}: ${errorHead(file.message)}`);
  }
} catch {
  failed += 1;
}
// Errors no test awaited fail the vitest step but no test, so they are named here.
const unhandled = unhandledErrorFailures(vitestUnhandled, root);
failed += unhandled.length;
failures.push(...unhandled);
try {
  const p = JSON.parse(readFileSync(playwrightJson, 'utf8'));
  passed += p.stats.expected;
  failed += p.stats.unexpected;
  const walk = (suite, file) => {
    for (const spec of suite.specs ?? [])
      for (const t of spec.tests ?? [])
        if (t.status === 'unexpected')
          failures.push(`e2e ${file} › ${spec.title}: ${errorHead(t.results?.at(-1)?.error?.message)}`);
    for (const child of suite.suites ?? []) walk(child, file);
  };
  for (const suite of p.suites ?? []) walk(suite, suite.file ?? suite.title);
} catch {
  if (built.ok) failed += 1;
}

if (failures.length > 0) {
  console.error('\n[sagaflow] failed tests');
  for (const f of failures) console.error(`  ✘ ${f}`);
}

console.error('\n[sagaflow] summary');
for (const r of results) console.error(`  ${r.ok ? '✔' : '✘'} ${r.title} (${r.secs}s)`);
const ok = results.every((r) => r.ok) && preflight.length === 0;
console.log(`tests: ${passed} passed, ${failed} failed`);
process.exit(ok && failed === 0 ? 0 : 1);
