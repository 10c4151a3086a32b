import { apiErrorInfo } from '@/trpc/api-error';
import { markKeptDraftSessionEnded } from '@/repairs/kept-draft';
import { signInHref } from './request-guards';

/**
 * On a 401 from the API, replaces the page with sign-in (which returns here afterwards). The
 * sign-in page's own refusals (a wrong password is a 401 too) stay on it. A repair draft open on the
 * page is kept to be offered again after signing in, and the sign-in page says so (review 42).
 */
export function bounceIfSignedOut(error: unknown): void {
  if (typeof window === 'undefined' || apiErrorInfo(error).httpStatus !== 401) return;
  const { pathname, search } = window.location;
  if (pathname === '/sign-in') return;
  const href = signInHref(`${pathname}${search}`);
  const draftKept = markKeptDraftSessionEnded(pathname);
  window.location.replace(`${href}${href.includes('?') ? '&' : '?'}ended=1${draftKept ? '&draft=kept' : ''}`);
}
