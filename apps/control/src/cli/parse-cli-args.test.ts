import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CliError } from './cli-error.ts';
import { maskUrl, parseCliSettings } from './cli-settings.ts';
import { shellQuote } from './commands/read-commands.ts';
import { parseCliArgs } from './parse-cli-args.ts';

function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (err) {
    return err as Error;
  }
  throw new Error('did not throw');
}

describe('a single-valued option given twice is a usage error naming it (review 36)', () => {
  it.each([
    [['retry', 'r', '--step', '1', '--step', '2'], '--step'],
    [['kick', 'r', '--reason', 'a', '--reason=b'], '--reason'],
    [['kick', 'r', '--idempotency-key', 'k', '--idempotency-key', 'k'], '--idempotency-key'],
    [['runs', 'list', '--limit', '1', '--limit', '2'], '--limit'],
  ])('%j names %s', (argv, option) => {
    const err = thrown(() => parseCliArgs(argv));
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(64);
    expect(err.message).toContain(`${option} is given twice`);
  });

  it('the repeatable options and a flag given twice are let through', () => {
    const args = parseCliArgs([
      'requeue',
      '--instance',
      'a',
      '--instance',
      'b',
      '--status',
      'Waiting',
      '--status',
      'Failed',
      '--json',
      '--json',
    ]);
    expect(args.options.instance).toEqual(['a', 'b']);
    expect(args.options.status).toEqual(['Waiting', 'Failed']);
    expect(args.options.json).toBe(true);
  });
});

describe('SAGAFLOW_URL with credentials (review 36)', () => {
  it('is refused naming the setting, the token to use instead, and without the password', () => {
    const err = thrown(() => parseCliSettings({ SAGAFLOW_URL: 'https://ops:hunter2@example.com:8443/' }));
    expect(err.message).toContain('invalid setting SAGAFLOW_URL');
    expect(err.message).toContain('SAGAFLOW_TOKEN');
    expect(err.message).toContain('https://ops:***@example.com:8443');
    expect(err.message).not.toContain('hunter2');
  });

  it('a user name alone is refused as well; a plain URL is kept', () => {
    expect(() => parseCliSettings({ SAGAFLOW_URL: 'http://ops@127.0.0.1:4000' })).toThrow(/user name or password/);
    expect(parseCliSettings({ SAGAFLOW_URL: 'http://127.0.0.1:4000/' }).url).toBe('http://127.0.0.1:4000');
  });

  it('maskUrl masks a password and leaves a URL without one as it is', () => {
    expect(maskUrl('http://a:b@h:1/x')).toBe('http://a:***@h:1/x');
    expect(maskUrl('http://h:1')).toBe('http://h:1');
  });
});

describe('SAGAFLOW_TIMEOUT_SECONDS: how long one call may take', () => {
  it('is 30 s unless set, and is taken in whole seconds', () => {
    expect(parseCliSettings({}).timeoutMs).toBe(30_000);
    expect(parseCliSettings({ SAGAFLOW_TIMEOUT_SECONDS: '120' }).timeoutMs).toBe(120_000);
  });

  it.each(['0', '-5', '1.5', 'soon', '3601'])('%s is refused naming the setting', (value) => {
    expect(() => parseCliSettings({ SAGAFLOW_TIMEOUT_SECONDS: value })).toThrow(
      /^invalid setting SAGAFLOW_TIMEOUT_SECONDS: must be/,
    );
  });
});

describe('shellQuote: a POSIX shell reads each argument back as itself (review 36)', () => {
  it.each(['plain', '--status', 'order 42', "it's", "a'b'c", '$HOME', '*', '', 'x\ny', 'é', 'a;b|c&d'])('%j', (arg) => {
    const line = ['runs', 'list', '--search', arg].map(shellQuote).join(' ');
    const words = execFileSync('bash', ['-c', 'eval "set -- $1"; printf "%s\\0" "$@"', '_', line], {
      encoding: 'utf8',
    });
    expect(words.split('\0').slice(0, -1)).toEqual(['runs', 'list', '--search', arg]);
  });

  it('leaves a plain argument unquoted', () => {
    expect(['runs', 'list', '--limit', '1', 'eyJrIjoxfQ'].map(shellQuote).join(' ')).toBe(
      'runs list --limit 1 eyJrIjoxfQ',
    );
  });
});
