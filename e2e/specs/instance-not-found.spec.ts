import { randomUUID } from 'node:crypto';
import { expect, test } from '../fixtures/test.ts';

// On the shared stack, which runs no process feed: it has no instance at all. A quarantined instance made by
// the demo feed is in instances.spec.ts, on a stack of its own.

test('the page for an unknown instance id says it was not found and links back to the list', async ({ page }) => {
  const id = randomUUID();
  await page.goto(`/instances/${id}`);
  const notFound = page.getByTestId('instance-not-found');
  await expect(notFound).toContainText('Instance not found');
  await expect(notFound).toContainText(id);
  await notFound.getByRole('link', { name: /Back to all instances/ }).click();
  await expect(page).toHaveURL(/\/instances$/);
  await expect(page.getByTestId('instances-empty')).toContainText('No active instances');
});
