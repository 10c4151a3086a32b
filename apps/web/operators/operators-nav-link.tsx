'use client';

import Link from 'next/link';
import { useRoleAllows } from '@/auth/use-session';

/** The nav's link to the operators page: only an admin manages operators, so only an admin sees it. */
export function OperatorsNavLink() {
  if (!useRoleAllows('admin')) return null;
  return (
    <Link href="/operators" data-testid="nav-operators">
      Operators
    </Link>
  );
}
