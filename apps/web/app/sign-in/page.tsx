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
  const notice =
    one(params.ended) !== undefined
      ? one(params.draft) === 'kept'
        ? 'Your session has ended. The repair draft you had open was not applied: it is kept in this tab, and its page shows it again, as you left it, after you sign in.'
        : 'Your session has ended. Sign in again to go back where you were.'
      : one(params.signedOut) !== undefined
        ? 'You are signed out.'
        : null;
  return <SignInForm next={safeNextPath(one(params.next))} notice={notice} />;
}
