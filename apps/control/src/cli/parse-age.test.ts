import { describe, expect, it } from 'vitest';
import { CliError } from './cli-error.ts';
import { ageOption } from './parse-age.ts';

describe('ageOption', () => {
  it.each([
    ['30d', 30 * 86_400],
    ['12h', 43_200],
    ['90m', 5400],
    ['3600s', 3600],
    ['45', 45],
  ])('reads %s as %i seconds', (text, seconds) => {
    expect(ageOption('older-than', text)).toBe(seconds);
  });

  it('is undefined when absent', () => {
    expect(ageOption('older-than', undefined)).toBeUndefined();
  });

  it.each(['0', '0d', '-1d', '1.5d', '30 days', '3651d', 'd', ''])('refuses "%s", naming the option', (text) => {
    const err = (() => {
      try {
        return ageOption('older-than', text);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).message).toMatch(/^--older-than must be an age/);
    expect((err as CliError).exitCode).toBe(64);
  });
});
