import { describe, expect, it } from 'vitest';
import { toStorableDiagnostic } from './to-storable-diagnostic.ts';

describe('toStorableDiagnostic', () => {
  it.each([
    ['plain', 'plain'],
    ['pair 😀 kept', 'pair 😀 kept'],
    ['nul \u0000 here', 'nul \ufffd here'],
    ['lone high \ud800', 'lone high \ufffd'],
    ['\udc00 lone low first', '\ufffd lone low first'],
    ['reversed \udc00\ud800 pair', 'reversed \ufffd\ufffd pair'],
    ['cut through a pair \ud83d', 'cut through a pair \ufffd'],
  ])('%j becomes %j, the same length', (input, expected) => {
    expect(toStorableDiagnostic(input)).toBe(expected);
    expect(toStorableDiagnostic(input)).toHaveLength(input.length);
  });
});
