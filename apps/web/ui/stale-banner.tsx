'use client';

import { formatMoment } from './format-time';
import { useNow } from './use-now';

/** How many refresh intervals may pass without an answer before the page says its data is stale. */
export const staleAfterIntervals = 2;

/**
 * Says, unmistakably, that what the page shows is old: the control plane has not answered a
 * refresh for more than `staleAfterIntervals` intervals (it is down, frozen, or the network is).
 * Driven by the time of the last successful answer, so a request that hangs (a frozen process
 * answers nothing, not an error) shows it as surely as one that fails. It goes away with the
 * next answer.
 */
export function StaleBanner({ updatedAt, intervalMs }: { updatedAt: number; intervalMs: number }) {
  const now = useNow(500);
  if (updatedAt === 0 || now - updatedAt <= staleAfterIntervals * intervalMs + 1000) return null;
  return (
    <div className="stale-banner" role="alert" data-testid="stale-banner">
      <strong>Data is stale:</strong> the control plane has not answered since {formatMoment(updatedAt)}. What you see
      may be out of date; the page keeps retrying. If this lasts, check that the control plane is running (its /healthz)
      and reachable from the console.
    </div>
  );
}
