import { describe, expect, it } from 'vitest';
import { sourceCondition, withSourceCondition, withoutSourceCondition } from './source-condition.mjs';

describe('the source condition in NODE_OPTIONS', () => {
  it('is added once for a process that runs the sources', () => {
    expect(withSourceCondition('')).toBe(`--conditions=${sourceCondition}`);
    expect(withSourceCondition(withSourceCondition('--trace-warnings'))).toBe(
      `--trace-warnings --conditions=${sourceCondition}`,
    );
  });

  it('is removed, every copy, for a process that runs the build, and other options stay', () => {
    const options = `--conditions=${sourceCondition} --trace-warnings  --conditions=${sourceCondition} --conditions=other`;
    expect(withoutSourceCondition(options)).toBe('--trace-warnings --conditions=other');
    expect(withoutSourceCondition(undefined)).toBe('');
  });
});
