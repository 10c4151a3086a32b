import { describe, expect, it } from 'vitest';
import { hostAllowed, hostNames } from './host-allowed.ts';

describe('hostAllowed', () => {
  const allowed = hostNames(['127.0.0.1', 'localhost', '::1', 'Console.Example.com']);
  it.each([
    ['127.0.0.1:4000', true],
    ['localhost', true],
    ['LOCALHOST:3000', true],
    ['[::1]:4000', true],
    ['console.example.com', true],
    ['attacker.example', false],
    ['127.0.0.1.attacker.example', false],
    ['localhost@attacker.example', false],
    ['', false],
    [undefined, false],
    ['bad host name', false],
  ])('Host %j → %s', (host, expected) => {
    expect(hostAllowed(host, allowed)).toBe(expected);
  });
});
