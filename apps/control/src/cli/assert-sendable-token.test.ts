import { describe, expect, it } from 'vitest';
import { CliError } from './cli-error.ts';
import { assertSendableToken } from './assert-sendable-token.ts';

describe('assertSendableToken', () => {
  it('lets a token of visible ASCII through', () => {
    expect(() => assertSendableToken(`sgf_${'A'.repeat(21)}-_${'z'.repeat(20)}`)).not.toThrow();
  });

  it.each([
    ['the hint `token list` prints', 'sgf_AbCd1234…', '"…" (U+2026) at character 13'],
    ['a line break', 'sgf_AbCd1234\nrest', '"\\n" (U+000A) at character 13'],
    ['a tab', 'sgf_Ab\tCd', '"\\t" (U+0009) at character 7'],
    ['a space', 'sgf_Ab Cd', '" " (U+0020) at character 7'],
    ['an emoji', 'sgf_😀', '"😀" (U+1F600) at character 5'],
  ])('refuses %s with exit 3, naming the character and saying to use the whole token', (_label, token, where) => {
    let error: unknown;
    try {
      assertSendableToken(token);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(3);
    expect((error as CliError).message).toContain(`SAGAFLOW_TOKEN is not usable: it holds ${where}`);
    expect((error as CliError).message).toContain('the whole token');
  });
});
