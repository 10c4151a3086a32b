import { describe, expect, it } from 'vitest';
import { trackOwnNotifications } from './own-notifications.ts';

describe('trackOwnNotifications', () => {
  it('takes one notification per expectation, then hears the rest as others', () => {
    const own = trackOwnNotifications(1_000, () => 0);
    own.expect();
    own.expect();
    expect([own.take(), own.take(), own.take()]).toEqual([true, true, false]);
  });

  it('recognises an echo heard before its statement returned, and keeps it when the statement notified', () => {
    const own = trackOwnNotifications(1_000, () => 0);
    const settle = own.expect();
    expect(own.take()).toBe(true);
    settle(true);
    expect(own.take()).toBe(false);
  });

  it('gives up an expectation whose statement did not notify', () => {
    const own = trackOwnNotifications(1_000, () => 0);
    const failed = own.expect();
    own.expect();
    failed(false);
    expect([own.take(), own.take()]).toEqual([true, false]);
  });

  it('forgets what it expected when a LISTEN takes hold again, and what is older than maxAgeMs', () => {
    let t = 0;
    const own = trackOwnNotifications(1_000, () => t);
    own.expect();
    own.forget();
    expect(own.take()).toBe(false);
    own.expect();
    t = 600;
    own.expect();
    t = 1_200;
    // The first is past its age and dropped; the second is still expected.
    expect([own.take(), own.take()]).toEqual([true, false]);
  });
});
