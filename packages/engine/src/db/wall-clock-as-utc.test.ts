import { describe, expect, it } from 'vitest';
import { wallClockAsUtc } from './wall-clock-as-utc.ts';

/** The string parser's reading, which the raw path used for every timestamp before (raw-values.ts). */
const parsedTimestamp = (text: string) => new Date(`${text.replace(' ', 'T')}+00:00`);
const parsedTimestamptz = (text: string) => new Date(text.replace(' ', 'T').replace(/[+-]\d{2}(:\d{2})?$/, '+00:00'));

/** A small deterministic generator (xorshift), so a failure names a text that fails again. */
function numbers(seed: number) {
  let x = seed;
  return (below: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % below;
  };
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

describe('wallClockAsUtc', () => {
  it('reads every text the string parser reads, to the same instant, and declines the rest', () => {
    const next = numbers(20261202);
    const years = [1, 99, 100, 1970, 2026, 9999];
    const offsets = ['', '+00', '-05', '+05:30', '-09:30', '+05:30:15'];
    let read = 0;
    for (let n = 0; n < 20_000; n += 1) {
      const year = n < years.length * 50 ? years[n % years.length]! : 100 + next(9_900);
      const fraction = next(8); // 0 (none) to 7 digits
      const text =
        `${pad(year, 4)}-${pad(1 + next(12), 2)}-${pad(1 + next(31), 2)} ` +
        `${pad(next(24), 2)}:${pad(next(60), 2)}:${pad(next(60), 2)}` +
        (fraction === 0 ? '' : `.${pad(next(10 ** fraction), fraction)}`);
      for (const offset of offsets) {
        const withOffset = `${text}${offset}`;
        const fast = wallClockAsUtc(withOffset, true);
        if (fast !== undefined) {
          read += 1;
          expect(fast.getTime(), withOffset).toBe(parsedTimestamptz(withOffset).getTime());
        }
      }
      const fast = wallClockAsUtc(text, false);
      if (fast !== undefined) expect(fast.getTime(), text).toBe(parsedTimestamp(text).getTime());
      expect(wallClockAsUtc(`${text}+00`, false), text).toBeUndefined();
    }
    // Most of them took the fast path: years 100-9999 with up to six fractional digits.
    expect(read).toBeGreaterThan(20_000 * 4 * 0.8);
  });

  it('declines what the server prints outside the common shape', () => {
    for (const text of [
      'infinity',
      '-infinity',
      '0044-03-15 12:00:00+00 BC',
      '12345-01-01 00:00:00+00',
      '0099-01-01 00:00:00+00',
    ])
      expect(wallClockAsUtc(text, true), text).toBeUndefined();
  });
});
