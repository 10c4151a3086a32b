import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddress } from './client-address.ts';

const request = (peer: string | undefined, forwardedFor?: string | string[]) =>
  ({
    socket: { remoteAddress: peer },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  }) as unknown as IncomingMessage;

describe('clientAddress: only a trusted proxy may name the client', () => {
  const trusted = new Set(['127.0.0.1']);
  it.each([
    ['an untrusted peer is the client, whatever it forwards', request('203.0.113.9', '198.51.100.1'), '203.0.113.9'],
    ['a trusted proxy: the last hop it appended', request('127.0.0.1', '10.0.0.1, 198.51.100.1'), '198.51.100.1'],
    ['a trusted proxy sending the header twice', request('127.0.0.1', ['10.0.0.1', '198.51.100.2']), '198.51.100.2'],
    ['a trusted proxy forwarding nothing is the client', request('127.0.0.1'), '127.0.0.1'],
    ['a trusted proxy forwarding blanks is the client', request('127.0.0.1', ' , '), '127.0.0.1'],
    ['no peer address', request(undefined), null],
  ])('%s', (_label, req, expected) => {
    expect(clientAddress(req, trusted)).toBe(expected);
  });
});
