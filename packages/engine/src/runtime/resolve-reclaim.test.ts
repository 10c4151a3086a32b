import { describe, expect, it } from 'vitest';
import { resolveReclaimSeconds, type ReclaimOverride } from './resolve-reclaim.ts';

describe('reclaim precedence (seed 000), every combination', () => {
  const configs = [
    { enabled: false, after_seconds: 900 },
    { enabled: true, after_seconds: 900 },
  ];
  const overrides: [string, ReclaimOverride][] = [
    ['nothing', {}],
    ['enable(true)', { enabled: true }],
    ['enable(false)', { enabled: false }],
    ['threshold 1200', { afterSeconds: 1200 }],
    ['threshold 1200 + enable(false)', { afterSeconds: 1200, enabled: false }],
    ['threshold 1200 + enable(true)', { afterSeconds: 1200, enabled: true }],
  ];
  // [override][config enabled?] → expected row threshold
  const expected: Record<string, [number | null, number | null]> = {
    nothing: [null, 900],
    'enable(true)': [900, 900],
    'enable(false)': [null, null],
    'threshold 1200': [1200, 1200],
    'threshold 1200 + enable(false)': [1200, 1200],
    'threshold 1200 + enable(true)': [1200, 1200],
  };
  for (const [label, override] of overrides) {
    configs.forEach((config, i) => {
      it(`${label} with config enabled=${String(config.enabled)} → ${String(expected[label]?.[i])}`, () => {
        expect(resolveReclaimSeconds(override, config)).toBe(expected[label]?.[i]);
      });
    });
  }
});
