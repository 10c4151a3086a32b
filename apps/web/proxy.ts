import { NextResponse, type NextRequest } from 'next/server';
import { hostAllowed, sessionCookieName, signInHref } from '@/auth/request-guards';
import { webEnv } from '@/env';

/**
 * Runs before every request the console serves. A Host it does not answer to is refused before
 * anything else (a page on another site that resolved its own name to us). A page asked for
 * without a session cookie bounces to sign-in and comes back afterwards. Whether the cookie's
 * session is still open is the control plane's to say: a page whose session ended gets a 401 from
 * the API and bounces from the browser (see ConsoleProviders).
 */
export function proxy(req: NextRequest): NextResponse {
  const host = req.headers.get('host');
  if (!hostAllowed(host, webEnv().CONSOLE_ALLOWED_HOSTS))
    return new NextResponse(
      `This console does not answer to host ${JSON.stringify(host ?? '')}; add its name to CONSOLE_ALLOWED_HOSTS if it is yours.\n`,
      { status: 403, headers: { 'content-type': 'text/plain; charset=utf-8' } },
    );
  const { pathname, search } = req.nextUrl;
  const open = pathname === '/sign-in' || pathname.startsWith('/api/');
  if (!open && !req.cookies.has(sessionCookieName)) {
    const target = new URL(signInHref(`${pathname}${search}`), req.nextUrl);
    return NextResponse.redirect(target);
  }
  return NextResponse.next();
}

export const config = {
  // Static assets need neither check; everything else (pages and the API proxy) goes through it.
  matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'],
};
