'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useTRPC } from '@/trpc/trpc-context';

/** The nav's link to the approvals queue, with how many repairs wait for a second operator. */
export function ApprovalsNavLink() {
  const trpc = useTRPC();
  // Signed out (the sign-in page), there is nothing to count.
  const signedIn = usePathname() !== '/sign-in';
  const overview = useQuery(
    trpc.overview.get.queryOptions(undefined, { refetchInterval: 10_000, retry: false, enabled: signedIn }),
  );
  const pending = overview.data?.approvals.pending ?? 0;
  return (
    <Link href="/approvals" data-testid="nav-approvals">
      Approvals
      {pending > 0 ? (
        <span className="badge badge-small badge-waiting" aria-label={`${pending} waiting`}>
          {pending}
        </span>
      ) : null}
    </Link>
  );
}
