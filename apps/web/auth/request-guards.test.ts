import { describe, expect, it } from 'vitest';
import { hostAllowed, safeNextPath, sameOrigin, signInHref } from './request-guards';

describe('the console refuses foreign hosts and origins, and sends people back only to its own pages', () => {
  const allowed = ['127.0.0.1', 'localhost', '[::1]'];
  it.each([
    ['127.0.0.1:3000', true],
    ['LOCALHOST:3000', true],
    ['[::1]:3000', true],
    ['attacker.example', false],
    ['attacker.example:3000', false],
    ['127.0.0.1.nip.io', false],
    [null, false],
    ['', false],
  ])('Host %j allowed: %s', (host, ok) => {
    expect(hostAllowed(host, allowed)).toBe(ok);
  });

  it.each([
    [null, '127.0.0.1:3000', true],
    ['http://127.0.0.1:3000', '127.0.0.1:3000', true],
    ['http://attacker.example', '127.0.0.1:3000', false],
    ['http://127.0.0.1:3001', '127.0.0.1:3000', false],
    ['null', '127.0.0.1:3000', false],
  ])('Origin %j on Host %j is same-origin: %s', (origin, host, ok) => {
    expect(sameOrigin(origin, host)).toBe(ok);
  });

  it.each([
    ['/runs/abc?x=1', '/runs/abc?x=1'],
    ['/instances', '/instances'],
    [null, '/runs'],
    ['https://evil.example/', '/runs'],
    ['//evil.example/x', '/runs'],
    ['/\\evil.example', '/runs'],
    ['javascript:alert(1)', '/runs'],
    ['/sign-in?next=/x', '/runs'],
    // Review 37: dot segments the parser folds into a protocol-relative `//host`.
    ['/.//evil.example/phish', '/runs'],
    ['/a/..//evil.example/phish', '/runs'],
    ['/././/evil.example', '/runs'],
    ['/%2e//evil.example', '/runs'],
    ['/a/%2e%2e//evil.example', '/runs'],
    ['/\t/evil.example', '/runs'],
    ['/\n/evil.example', '/runs'],
    ['/runs\\..\\..\\evil.example', '/runs'],
    ['/./sign-in', '/runs'],
    // Folded paths that stay on the console are kept, as the browser would read them.
    ['/a/../runs?x=1#top', '/runs?x=1#top'],
    ['/./instances', '/instances'],
  ])('next %j → %j', (next, expected) => {
    expect(safeNextPath(next)).toBe(expected);
  });

  it('signInHref carries the page to come back to', () => {
    expect(signInHref('/runs/abc?status=Failed')).toBe('/sign-in?next=%2Fruns%2Fabc%3Fstatus%3DFailed');
    expect(signInHref('/runs')).toBe('/sign-in');
  });
});
