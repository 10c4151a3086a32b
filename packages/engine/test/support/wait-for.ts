import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls until `check` returns a value other than undefined, or fails with `what` after `timeoutMs`
 * (a function: read at the failure, so it can say how far things got). `intervalMs` is the pause
 * between checks: shorter for a test that waits for hundreds of quick steps one after another.
 */
export async function waitFor<T>(
  what: string | (() => string),
  check: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await sleep(intervalMs);
  }
}
