'use client';

import { useMutation } from '@tanstack/react-query';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useTRPC } from '@/trpc/trpc-context';
import { useSession } from './use-session';

/** The signed-in operator, its role, its account (password) and sign-out (in the top bar; nothing on the sign-in page). */
export function SessionMenu() {
  if (usePathname() === '/sign-in') return null;
  return <SignedInAs />;
}

function SignedInAs() {
  const trpc = useTRPC();
  const session = useSession();
  const signOut = useMutation(
    trpc.auth.signOut.mutationOptions({ onSettled: () => window.location.assign('/sign-in?signedOut=1') }),
  );
  const operator = session.data?.operator;
  if (!operator) return null;
  return (
    <div className="session-menu" data-testid="session-menu">
      <span>
        Signed in as <strong data-testid="signed-in-name">{operator.displayName}</strong>{' '}
        <span className="badge badge-small" data-testid="signed-in-role">
          {operator.role}
        </span>
      </span>
      <Link href="/account" data-testid="account-link">
        Account
      </Link>
      <button type="button" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
        {signOut.isPending ? 'Signing out…' : 'Sign out'}
      </button>
    </div>
  );
}
