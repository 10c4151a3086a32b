'use client';

import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '@/trpc/trpc-context';

export type ConsoleRole = 'viewer' | 'operator' | 'admin';
const rank: Record<ConsoleRole, number> = { viewer: 0, operator: 1, admin: 2 };

/** Who is signed in (auth.me), re-checked every minute so an ended session bounces even on a quiet page. */
export function useSession() {
  const trpc = useTRPC();
  return useQuery(trpc.auth.me.queryOptions(undefined, { staleTime: 30_000, refetchInterval: 60_000 }));
}

/**
 * Whether the signed-in operator's role allows `required`. False until known: a control is shown
 * only once the role is known to allow it (the server refuses anyway).
 */
export function useRoleAllows(required: ConsoleRole): boolean {
  const role = useSession().data?.operator.role;
  return role !== undefined && role in rank && rank[role] >= rank[required];
}
