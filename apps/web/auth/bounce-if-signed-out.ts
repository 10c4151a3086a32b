import { apiErrorInfo } from '@/trpc/api-error';
import { markKeptDraftsSessionEnded } from '@/repairs/kept-draft';
import { signInHref } from './request-guards';

/**
 * On a 401 from the API, replaces the page with sign-in (which returns here afterwards). The
 * sign-in page's own refusals (a wrong password is a 401 too) stay on it. The repair drafts open on the
 * page are kept to be offered again after their operator signs in, and the sign-in page says whose
 * (review 42, ADR 0120).
 */
export function bounceIfSignedOut(error: unknown): void {
  if (typeof window === 'undefined' || apiErrorInfo(error).httpStatus !== 401) return;
  const { pathname, search } = window.location;
  if (pathname === '/sign-in') return;
  const href = signInHref(`${pathname}${search}`);
  const draftKept = markKeptDraftsSessionEnded(pathname);
  window.location.replace(`${href}${href.includes('?') ? '&' : '?'}ended=1${draftKept ? '&draft=kept' : ''}`);
}
