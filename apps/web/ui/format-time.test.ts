import { describe, expect, it } from 'vitest';
import { formatDateTime, formatTimeOfDay, formatUtcOffset, formatZone } from './format-time';

describe('formatUtcOffset', () => {
  it.each([
    [0, 'UTC'],
    [330, 'UTC+05:30'],
    [345, 'UTC+05:45'],
    [60, 'UTC+01:00'],
    [-240, 'UTC-04:00'],
    [-570, 'UTC-09:30'],
    [840, 'UTC+14:00'],
  ])('%i minutes east of UTC reads %s', (minutes, text) => {
    expect(formatUtcOffset(minutes)).toBe(text);
  });
});

describe('an absolute time names its zone (review 42)', () => {
  const iso = '2026-12-06T11:56:30.120Z';
  it('a date and time ends with the zone of that instant', () => {
    expect(formatDateTime(iso)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC([+-]\d{2}:\d{2})?$/);
    expect(formatDateTime(iso).endsWith(` ${formatZone(iso)}`)).toBe(true);
  });
  it('a time of day ends with the zone too, with milliseconds when asked', () => {
    expect(formatTimeOfDay(iso)).toMatch(/^\d{2}:\d{2}:\d{2} UTC([+-]\d{2}:\d{2})?$/);
    expect(formatTimeOfDay(iso, true)).toMatch(/^\d{2}:\d{2}:\d{2}\.120 UTC([+-]\d{2}:\d{2})?$/);
  });
});
