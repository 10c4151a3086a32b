import type { Metadata } from 'next';
import { safeNextPath } from '@/auth/request-guards';
import { SignInForm } from '@/auth/sign-in-form';

export const metadata: Metadata = { title: 'Sign in' };

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const ended = one(params.ended) !== undefined;
  const notice = ended
    ? 'Your session has ended. Sign in again to go back where you were.'
    : one(params.signedOut) !== undefined
      ? 'You are signed out.'
      : null;
  // Whose draft is kept is read from the tab itself (kept-draft.ts), by the form once in the browser.
  return (
    <SignInForm
      next={safeNextPath(one(params.next))}
      notice={notice}
      draftKept={ended && one(params.draft) === 'kept'}
    />
  );
}
