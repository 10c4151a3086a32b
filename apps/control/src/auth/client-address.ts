import type { IncomingMessage } from 'node:http';

/**
 * The client's address: the peer's, unless the peer is a trusted proxy (the console's server), in
 * which case the last hop it appended to X-Forwarded-For.
 */
export function clientAddress(req: IncomingMessage, trustedProxies: ReadonlySet<string>): string | null {
  const peer = req.socket.remoteAddress ?? null;
  if (peer === null || !trustedProxies.has(peer)) return peer;
  const forwarded = req.headers['x-forwarded-for'];
  const value = Array.isArray(forwarded) ? forwarded.join(',') : forwarded;
  const last = value
    ?.split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .at(-1);
  return last ?? peer;
}
