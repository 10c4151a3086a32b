import { describe, expect, it } from 'vitest';
import { instancesHref, instancesPageInputFor, parseInstancesFilter } from './instances-filter';

describe('the instances filter (failing only, ADR 0127)', () => {
  it('keeps "failing only" in the URL and asks instances.page for failingOnly', () => {
    const filter = parseInstancesFilter({ failing: '1', state: 'Booking' });
    expect(filter).toMatchObject({ status: 'ACTIVE', failingOnly: true, state: 'Booking' });
    expect(instancesHref(filter)).toBe('/instances?state=Booking&failing=1');
    expect(instancesPageInputFor(filter)).toMatchObject({ failingOnly: true, state: 'Booking' });
  });

  it('leaves it off unless asked, and sends no failingOnly then', () => {
    const filter = parseInstancesFilter({ failing: 'yes' });
    expect(filter.failingOnly).toBe(false);
    expect(instancesHref(filter)).toBe('/instances');
    expect(instancesPageInputFor(filter)).not.toHaveProperty('failingOnly');
  });
});
