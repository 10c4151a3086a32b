'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC, useTRPCClient } from '@/trpc/trpc-context';
import { heldInput, mergeChanges, withOlderCompensations, withOlderEvents, withOlderSteps } from './run-history';
import type { RunHistory } from './run-history';
import { isOpenRun } from './run-statuses';

/** The parts of a run's history a page can load older rows of. */
export type HistoryPart = 'steps' | 'events' | 'compensations';

/**
 * A run page's data (ADR 0035): the head (`runs.get`: the run and the newest page of each part)
 * once, then every second while the run is open only what is newer than what the page holds
 * (`runs.changes`), merged in; `loadOlder` adds the page before the oldest row held. A poll that
 * finds a row it missed (committed behind a newer one it already had) reads the head again.
 */
export function useRunHistory(id: string) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  // runs.get's own key: what a repair invalidates (`trpc.runs.get.pathFilter()`) refreshes this page.
  const queryKey = trpc.runs.get.queryKey({ id });
  const current = () => queryClient.getQueryData<RunHistory>(queryKey);
  const query = useQuery({
    queryKey,
    queryFn: async (): Promise<RunHistory> => {
      const held = current();
      if (!held) return client.runs.get.query({ id });
      const sent = heldInput(held);
      const changes = await client.runs.changes.query(sent);
      // Older pages loaded while the poll was out are in the cache now: merge into that.
      const { history, missed } = mergeChanges(current() ?? held, sent, changes);
      return missed ? client.runs.get.query({ id }) : history;
    },
    // Poll only a run we have seen and that is still open; a missing run will not appear by polling.
    refetchInterval: (q) => (q.state.data && isOpenRun(q.state.data.run.status) ? 1000 : false),
  });

  const [loading, setLoading] = useState<HistoryPart | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  async function loadOlder(part: HistoryPart) {
    const h = current();
    if (!h) return;
    setLoading(part);
    setLoadError(null);
    try {
      const update = (next: (h: RunHistory) => RunHistory) =>
        queryClient.setQueryData<RunHistory>(queryKey, (cur) => (cur ? next(cur) : cur));
      if (part === 'steps' && h.actions[0]) {
        const page = await client.runs.steps.query({ id, before: h.actions[0].sequence });
        update((cur) => withOlderSteps(cur, page));
      } else if (part === 'events' && h.events[0]) {
        const page = await client.runs.events.query({ id, before: h.events[0].id });
        update((cur) => withOlderEvents(cur, page));
      } else if (part === 'compensations' && h.compensations[0]) {
        const first = h.compensations[0];
        const page = await client.runs.compensations.query({
          id,
          before: { level: first.rollbackLevel, ordinal: first.ordinal },
        });
        update((cur) => withOlderCompensations(cur, page));
      }
    } catch (err) {
      setLoadError(err instanceof Error ? err.message : String(err));
    } finally {
      setLoading(null);
    }
  }
  return { query, loadOlder, loading, loadError };
}
