import { createHash, randomBytes } from 'node:crypto';

/** A new session token: 32 random bytes, the cookie's value. Only its hash is stored. */
export function newSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The sessions row id for a token: a stolen database copy holds no usable cookie. */
export function sessionIdFor(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
