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

/**
 * Where to go after signing in: a path on this console only. Anything else (another site,
 * `//evil.example`, `/\evil.example`, a scheme) falls back to the runs list, so the sign-in page
 * cannot be used to send someone elsewhere.
 */
export function safeNextPath(next: string | null | undefined): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/runs';
  if (next.startsWith('/sign-in')) return '/runs';
  try {
    const url = new URL(next, 'http://console.invalid');
    if (url.origin !== 'http://console.invalid') return '/runs';
    return `${url.pathname}${url.search}${url.hash}`;
  } catch {
    return '/runs';
  }
}

/** The sign-in page's address that comes back to `path` afterwards. */
export function signInHref(path: string): string {
  const next = safeNextPath(path);
  return next === '/runs' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(next)}`;
}
