'use client';

import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '@/trpc/trpc-context';

const refreshMs = 2000;

const age = (seconds: number) =>
  seconds < 90
    ? `${Math.round(seconds)} s`
    : seconds < 5400
      ? `${Math.round(seconds / 60)} min`
      : `${Math.round(seconds / 3600)} h`;

/**
 * The outbox behind the process managers: how many commands wait to be published and for how long,
 * and how many were given up on (Dead rows are kept; they need a person).
 */
export function OutboxLag() {
  const trpc = useTRPC();
  const lag = useQuery(trpc.outbox.lag.queryOptions(undefined, { refetchInterval: refreshMs }));
  if (!lag.data) return null;
  const { pending, oldestPendingAgeSeconds, dead } = lag.data;
  return (
    <p className={dead > 0 ? 'outbox-lag outbox-lag-dead' : 'outbox-lag muted'} data-testid="outbox-lag">
      Outbox:{' '}
      {pending === 0
        ? 'nothing waiting to be published'
        : `${pending} waiting to be published, oldest ${age(oldestPendingAgeSeconds)}`}
      {dead > 0 ? ` · ${dead} dead (gave up after their last attempt; kept for repair)` : ''}
    </p>
  );
}
