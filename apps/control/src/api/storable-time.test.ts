import { describe, expect, it } from 'vitest';
import { storableTime } from './storable-time.ts';

describe('storableTime', () => {
  it.each([
    '0001-01-01T00:00:00Z',
    '0001-01-01T00:00:00-01:00',
    '2026-12-06T06:30:00.123+02:00',
    '9999-12-31T23:59:59.999Z',
    '9999-12-31T23:59:59-23:59',
  ])('accepts %s, a time PostgreSQL holds', (t) => {
    expect(storableTime({ offset: true }).safeParse(t).success).toBe(true);
  });

  it.each([
    '0000-01-01T00:00:00Z',
    '0000-12-31T23:59:59.999Z',
    '0000-01-01T00:00:00+01:00',
    '0001-01-01T00:00:00+23:59',
  ])('refuses %s, before year 1 in UTC, saying which times it takes', (t) => {
    const result = storableTime({ offset: true }).safeParse(t);
    expect(result.error?.issues[0]?.message).toBe(
      'must be at or after 0001-01-01T00:00:00Z, the earliest time the database holds',
    );
  });

  it('takes an offset only when asked to', () => {
    expect(storableTime().safeParse('2026-01-01T00:00:00+01:00').success).toBe(false);
    expect(storableTime().safeParse('2026-01-01T00:00:00Z').success).toBe(true);
  });
});
