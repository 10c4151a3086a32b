import { parseCookie, stringifySetCookie } from 'cookie';

export const sessionCookieName = 'sagaflow_session';

/** The session token a request carries, if any. */
export function sessionTokenFrom(cookieHeader: string | undefined): string | null {
  if (!cookieHeader) return null;
  return parseCookie(cookieHeader)[sessionCookieName] ?? null;
}

/**
 * The Set-Cookie value: httpOnly (no script reads it), SameSite=Strict (no other site's page sends
 * it), for the whole console; `maxAgeSeconds: 0` clears it.
 */
export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return stringifySetCookie({
    name: sessionCookieName,
    value: token,
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure,
    maxAge: maxAgeSeconds,
  });
}
