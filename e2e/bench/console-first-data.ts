/**
 * Issue 10's performance item, run by the scale bench (`npm run bench -- scale`), not a spec: with
 * the bench's database behind a control plane and the built console (fixtures/start-console-stack.ts),
 * Chromium opens each page `VISITS` times in a fresh tab, signed in, and times from navigation to the
 * first data on screen (a run row, a step row, the overview's attention panel and its charts).
 * Prints one JSON object on stdout; progress on stderr.
 *
 *   SCALE_DATABASE_URL=postgres://... SCALE_RUN_ID=<uuid> node --import tsx e2e/bench/console-first-data.ts
 */
import { chromium } from '@playwright/test';
import { chromiumArgs, chromiumPath } from '../fixtures/chromium.ts';
import { startConsoleStack } from '../fixtures/start-console-stack.ts';

const sourceCondition = '--conditions=@sagaflow/source';
if (!(process.env.NODE_OPTIONS ?? '').includes(sourceCondition))
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} ${sourceCondition}`.trim();

const databaseUrl = process.env.SCALE_DATABASE_URL;
const runId = process.env.SCALE_RUN_ID;
if (!databaseUrl || !runId) throw new Error('SCALE_DATABASE_URL and SCALE_RUN_ID are required');
const visits = Number(process.env.VISITS ?? '5');

const pages = [
  { name: 'runs list', path: '/runs', firstData: '[data-testid="run-row"]' },
  { name: 'runs list, status Completed', path: '/runs?status=Completed', firstData: '[data-testid="run-row"]' },
  { name: 'runs list, stuck, stalest', path: '/runs?status=stuck&order=stalest', firstData: '[data-testid="run-row"]' },
  { name: 'run page', path: `/runs/${runId}`, firstData: '[data-testid="step-row"]' },
  { name: 'instances list', path: '/instances', firstData: '[data-testid="instance-row"]' },
  { name: 'overview: attention', path: '/', firstData: '[data-testid="needs-attention"]' },
  { name: 'overview: charts', path: '/', firstData: '[data-testid="chart-runs"]' },
];

const log = (line: string) => process.stderr.write(`[console-first-data] ${line}\n`);
const stack = await startConsoleStack({ label: 'scale bench', env: { DATABASE_URL: databaseUrl } });
const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
try {
  const context = await browser.newContext();
  await context.addCookies([{ name: 'sagaflow_session', value: stack.sessionCookie, url: stack.baseUrl }]);
  const results = [];
  for (const p of pages) {
    const ms: number[] = [];
    // One warm-up visit (the server's first render of a route, the browser's caches), then the timed ones.
    for (let i = 0; i <= visits; i++) {
      const page = await context.newPage();
      const start = performance.now();
      await page.goto(`${stack.baseUrl}${p.path}`, { waitUntil: 'commit' });
      await page.locator(p.firstData).first().waitFor({ state: 'visible', timeout: 60_000 });
      if (i > 0) ms.push(performance.now() - start);
      await page.close();
    }
    ms.sort((a, b) => a - b);
    const result = {
      name: p.name,
      path: p.path,
      medianMs: ms[Math.floor(ms.length / 2)] ?? NaN,
      maxMs: ms.at(-1) ?? NaN,
      ms,
    };
    log(`${p.name}: median ${result.medianMs.toFixed(0)} ms, max ${result.maxMs.toFixed(0)} ms`);
    results.push(result);
  }
  process.stdout.write(`${JSON.stringify({ visits, pages: results })}\n`);
} finally {
  await browser.close();
  await stack.stop();
}
