import { describe, expect, it } from 'vitest';
import { outboxBackoffMs } from './outbox-backoff.ts';

describe('outboxBackoffMs', () => {
  const policy = { baseDelayMs: 1000, maxDelayMs: 60_000 };
  it.each([
    [1, 1000],
    [2, 2000],
    [3, 4000],
    [6, 32_000],
    [7, 60_000],
    [1000, 60_000],
    [0, 1000],
  ])('after attempt %i waits %i ms', (attempt, delay) => {
    expect(outboxBackoffMs(attempt, policy)).toBe(delay);
  });

  it('a zero base retries at once', () => {
    expect(outboxBackoffMs(5, { baseDelayMs: 0, maxDelayMs: 10 })).toBe(0);
  });
});
