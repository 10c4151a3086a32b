/** The session cookie the control plane sets (httpOnly, SameSite=Strict); the console only checks it is there. */
export const sessionCookieName = 'sagaflow_session';

/** The host name a Host header names, lower-cased, "[::1]" for IPv6; null when it is no host. */
export function hostNameOf(hostHeader: string | null): string | null {
  if (!hostHeader) return null;
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/** Whether a request's Host is one the console answers to (CONSOLE_ALLOWED_HOSTS). */
export function hostAllowed(hostHeader: string | null, allowed: readonly string[]): boolean {
  const name = hostNameOf(hostHeader);
  return name !== null && allowed.includes(name);
}

/**
 * Whether a state-changing request comes from the console's own pages: a browser sends Origin on
 * every POST, and it must name this very host. No Origin means no browser sent it (a script with
 * its own cookie); the control plane's roles still apply to it.
 */
export function sameOrigin(originHeader: string | null, hostHeader: string | null): boolean {
  if (originHeader === null) return true;
  try {
    return new URL(originHeader).host.toLowerCase() === (hostHeader ?? '').toLowerCase();
  } catch {
    return false;
  }
}

/** A dummy origin `next` is resolved against: a result on any other origin left the console. */
const consoleOrigin = 'http://console.invalid';

/**
 * Where to go after signing in: a path on this console only. Anything else (another site,
 * `//evil.example`, `/\evil.example`, a scheme, or a dot segment the URL parser folds into `//`:
 * `/.//evil.example`, `/a/..//evil.example`) falls back to the runs list, so the sign-in page cannot
 * be used to send someone elsewhere. The path is judged as the browser will read it: resolved
 * first, then its resolved pathname checked, and only the resolved pathname, query and fragment
 * returned (ADR 0111).
 */
export function safeNextPath(next: string | null | undefined): string {
  if (!next || !next.startsWith('/') || next.includes('\\')) return '/runs';
  try {
    const url = new URL(next, consoleOrigin);
    if (url.origin !== consoleOrigin) return '/runs';
    const { pathname } = url;
    if (pathname.startsWith('//') || pathname.includes('\\') || pathname.startsWith('/sign-in')) return '/runs';
    return `${pathname}${url.search}${url.hash}`;
  } catch {
    return '/runs';
  }
}

/** The sign-in page's address that comes back to `path` afterwards. */
export function signInHref(path: string): string {
  const next = safeNextPath(path);
  return next === '/runs' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(next)}`;
}
