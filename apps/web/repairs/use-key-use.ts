'use client';

import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { useTRPC } from '@/trpc/trpc-context';
import { describeKeyUse } from './key-use';

/**
 * For a draft offered back after its session ended (use-kept-draft.ts), what became of its idempotency
 * key since it was kept (ADR 0120 addendum): a copy of the tab (a tab opened from it holds its
 * sessionStorage), or the lost session's own Apply, or anyone with the key may have used it. Asked once,
 * before the panel says anything about it; a key found used calls `onUsed` (the kept draft is dropped).
 * `items` is a bulk draft's target ids (its items are audited under `<key>:<id>`).
 */
export function useRestoredKeyUse(
  restored: boolean,
  idempotencyKey: string,
  onUsed: (() => void) | undefined,
  items?: string[],
) {
  const trpc = useTRPC();
  const query = useQuery(
    trpc.repairs.keyUse.queryOptions(
      { idempotencyKey, ...(items ? { items } : {}) },
      { enabled: restored, retry: false, staleTime: Infinity, refetchOnWindowFocus: false },
    ),
  );
  const used = query.data ? describeKeyUse(query.data, items?.length) : null;
  const dropped = useRef(false);
  const onUsedRef = useRef(onUsed);
  onUsedRef.current = onUsed;
  useEffect(() => {
    if (used && !dropped.current) {
      dropped.current = true;
      onUsedRef.current?.();
    }
  }, [used]);
  return {
    /** Not asked (not a restored draft). */
    idle: !restored,
    checking: restored && query.isPending,
    failed: restored && query.isError ? query.error : null,
    /** The key's use, described; null while unknown or when it was never used. */
    used: restored ? used : null,
  };
}
