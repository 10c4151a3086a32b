import { describe, expect, it } from 'vitest';

import { uniqueDatabaseName } from './unique-database-name.ts';

describe('uniqueDatabaseName', () => {
  it.each([
    ['orders', /^orders_[a-z0-9]+$/],
    ['Claim-Action.race', /^claim_action_race_[a-z0-9]+$/],
    ['42nd', /^db_42nd_[a-z0-9]+$/],
    ['', /^db__[a-z0-9]+$/],
    ['x'.repeat(200), /^x+_[a-z0-9]+$/],
  ])('turns %j into a lowercase [a-z0-9_] name of at most 63 chars', (prefix, pattern) => {
    const name = uniqueDatabaseName(prefix);
    expect(name).toMatch(pattern);
    expect(name.length).toBeLessThanOrEqual(63);
  });

  it('never repeats', () => {
    const names = new Set(Array.from({ length: 1000 }, () => uniqueDatabaseName('t')));
    expect(names.size).toBe(1000);
  });
});
