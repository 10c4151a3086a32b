'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC, useTRPCClient } from '@/trpc/trpc-context';
import { newestHeldTransition, withOlderTransitions, withPolled, type HeldInstance } from './instance-history';

/**
 * An instance page's data (ADR 0035): `instances.get` with the newest page of its history once,
 * then every 2 s while it is not completed the instance again with only the transitions after the
 * newest held (one instance's transitions commit in id order: it is locked for each); `loadOlder`
 * adds the page before the oldest held.
 */
export function useInstanceHistory(id: string) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  // instances.get's own key: a repair that invalidates it refreshes this page.
  const queryKey = trpc.instances.get.queryKey({ id });
  const current = () => queryClient.getQueryData<HeldInstance>(queryKey);
  const query = useQuery({
    queryKey,
    queryFn: async (): Promise<HeldInstance> => {
      const held = current();
      const after = held ? newestHeldTransition(held) : undefined;
      if (!held || after === undefined) return client.instances.get.query({ id });
      const polled = await client.instances.get.query({ id, historyAfter: after });
      return withPolled(current() ?? held, polled);
    },
    refetchInterval: (q) => (q.state.data && q.state.data.instance.status !== 'COMPLETED' ? 2000 : false),
  });
  const [loading, setLoading] = useState(false);
  const [loadError, setLoadError] = useState<string | null>(null);
  async function loadOlder() {
    const oldest = current()?.history[0];
    if (!oldest) return;
    setLoading(true);
    setLoadError(null);
    try {
      const page = await client.instances.transitions.query({ id, before: oldest.id });
      queryClient.setQueryData<HeldInstance>(queryKey, (cur) => (cur ? withOlderTransitions(cur, page) : cur));
    } catch (err) {
      setLoadError(err instanceof Error ? err.message : String(err));
    } finally {
      setLoading(false);
    }
  }
  return { query, loadOlder, loading, loadError };
}
