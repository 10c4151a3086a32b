import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { expect, startDemoRunViaApi, test } from '../fixtures/test.ts';

test("a run page's Download history (JSON) saves the run's whole history as a file", async ({ page, request }) => {
  const runId = await startDemoRunViaApi(request, `history-${randomUUID()}`);
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Completed');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-history').click()]);
  expect(download.suggestedFilename()).toBe(`run-${runId}.json`);
  const saved = JSON.parse(readFileSync(await download.path(), 'utf8')) as {
    run: { id: string; status: string };
    steps: { name: string; status: string }[];
    events: { type: string }[];
  };
  expect(saved.run).toMatchObject({ id: runId, status: 'Completed' });
  expect(saved.steps.length).toBeGreaterThan(0);
  expect(saved.steps.every((s) => s.status === 'Completed')).toBe(true);
  expect(saved.events.map((e) => e.type)).toContain('run.completed');
});

test('the download is behind the session: without one it is refused', async ({ playwright, baseURL }) => {
  const anonymous = await playwright.request.newContext({ storageState: { cookies: [], origins: [] } });
  const res = await anonymous.get(`${baseURL}/api/history/runs/${randomUUID()}`);
  expect(res.status()).toBe(401);
  expect(res.headers()['content-disposition']).toBeUndefined();
  await anonymous.dispose();
});
