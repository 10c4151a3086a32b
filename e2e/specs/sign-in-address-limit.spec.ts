import { startDemoStack, type DemoStack } from '../fixtures/start-demo-stack.ts';
import { expect, test } from '../fixtures/test.ts';

/**
 * Issue 9 §2: sign-in is rate-limited per address, and a client cannot dodge that by sending its own
 * X-Forwarded-For through the console: the console's server (apps/web/serve.mjs) replaces it with
 * the connection's address. A stack of its own with a limit of 3 failures per address, so the
 * shared stack's sign-ins are never blocked.
 */
test.describe('the per-address sign-in limit through the console', () => {
  let stack: DemoStack | null = null;
  // eslint-disable-next-line no-empty-pattern
  test.beforeAll(async ({}, testInfo) => {
    testInfo.setTimeout(180_000);
    stack = await startDemoStack({
      intervalMs: 600_000,
      controlEnv: { SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ADDRESS: '3', SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ACCOUNT: '100' },
    });
  });
  test.afterAll(async () => {
    await stack?.stop();
  });

  test('failed sign-ins each claiming another X-Forwarded-For still count against the one real address', async () => {
    if (!stack) throw new Error('the stack did not start');
    const { baseUrl } = stack;
    const signIn = (i: number) =>
      fetch(`${baseUrl}/api/trpc/auth.signIn`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: baseUrl, 'x-forwarded-for': `203.0.113.${i}` },
        body: JSON.stringify({ name: `nobody-${i}`, password: 'not the password' }),
      });
    for (let i = 1; i <= 3; i++) expect((await signIn(i)).status).toBe(401);
    const fourth = await signIn(4);
    expect(fourth.status, await fourth.clone().text()).toBe(429);
    expect(await fourth.text()).toMatch(/too many/i);
  });
});
