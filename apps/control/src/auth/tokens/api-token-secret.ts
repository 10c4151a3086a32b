import { createHash, randomBytes } from 'node:crypto';

/** Every API token starts with this, so a leaked one is recognisable (secret scanners, logs, diffs). */
export const apiTokenPrefix = 'sgf_';

const shape = /^sgf_[A-Za-z0-9_-]{43}$/;

/** A new token: the prefix and 32 random bytes. Only its hash and its first characters are stored. */
export function newApiToken(): { token: string; secretHash: string; hint: string } {
  const token = `${apiTokenPrefix}${randomBytes(32).toString('base64url')}`;
  return { token, secretHash: apiTokenHash(token), hint: token.slice(0, apiTokenPrefix.length + 8) };
}

/**
 * The stored form of a token. A plain sha-256 suffices (as for session ids): the secret is 256
 * random bits, so no dictionary or brute force reaches it, and the lookup must stay one index probe.
 */
export function apiTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Whether a string has a token's shape (checked before any lookup). */
export const looksLikeApiToken = (value: string) => shape.test(value);
