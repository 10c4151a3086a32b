import { expect, test } from '../fixtures/test.ts';

/** Ids an on-call engineer pastes by hand: cut short, with a trailing space or slash, upper case, or junk. */
const badIds = [
  '0b7990e2-534c',
  'not-a-run',
  `${'9'.repeat(300)}`,
  '%E2%80%AE%3Cscript%3E',
  'A1B2C3D4-0000-4000-8000-00000000000Z',
];

for (const id of badIds) {
  test(`a run link with a malformed id (${id.slice(0, 20)}) says why it cannot be shown and links back, never an error page`, async ({
    page,
  }) => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const res = await page.goto(`/runs/${id}`);
    expect(res?.status() ?? 0).toBeLessThan(500);
    const body = page.locator('main');
    await expect(body).toContainText(/not found|not a valid run id/i);
    await expect(body).not.toContainText(/stack|prisma|TRPCClientError|Unexpected|Application error/i);
    await expect(page.getByRole('link', { name: /Back to all runs/ })).toBeVisible();
    expect(errors).toEqual([]);
  });
}

test('an instance link with a malformed id says it is not an instance id and links back', async ({ page }) => {
  await page.goto('/instances/not-an-instance');
  const body = page.locator('main');
  await expect(body).toContainText(/not found|not a valid instance id/i);
  await expect(body).not.toContainText(/stack|prisma|TRPCClientError|Application error/i);
  await expect(page.getByRole('link', { name: /instances/i }).first()).toBeVisible();
});
