import type { DbOutboxMessage } from '../store/claim-outbox-batch.ts';
import { renewOutboxClaim } from '../store/renew-outbox-claim.ts';
import type { OutboxPublisherDeps } from './outbox-publisher-options.ts';

/** How long a renewal waits for a row another session holds before the publisher keeps the window it had. */
const renewLockWaitMs = 1_000;

/**
 * Below this much of its claim window left, a publisher renews the window (ADR 0139): before it sends its
 * next row, and before a source's delivered rows wait for their mark. Half the window, as a lease is
 * renewed at half its life: it costs no statement while a batch goes out in time, keeps a publish's
 * deadline its own `publish_timeout_ms` instead of what a slow claim or a slow batch left of the window,
 * and leaves a mark that queues behind others (a slow database) half a window. It was once the shorter
 * of that and one publish deadline, which let a source end with less than a quarter of its window left
 * and lose its delivered rows to a rival while their mark waited 1.5 s (review 68).
 */
export function renewBelowMs(config: OutboxPublisherDeps['config']): number {
  return (config.visibility_timeout_seconds * 1000) / 2;
}

/**
 * Renews the claim window of `rows` (held by this publisher) in one statement. Each renewed row's
 * `claimed_until` becomes its new window, so its later failure, release or renewal is conditional on it.
 * Returns when the new window ends in this process's monotonic time (counted, as a claim's is, from just
 * before the time it wrote: ADR 0131) and which rows it kept; null if the statement failed, in which case
 * every row keeps the window it had and the publisher goes on under it.
 */
export async function renewClaimWindow(
  deps: OutboxPublisherDeps,
  rows: DbOutboxMessage[],
): Promise<{ endsAt: number; kept: Set<string> } | null> {
  const startedAt = performance.now();
  try {
    const renewed = await renewOutboxClaim(deps.prisma, {
      rows,
      now: deps.clock.now(),
      visibilityTimeoutSeconds: deps.config.visibility_timeout_seconds,
      lockWaitMs: Math.min(renewLockWaitMs, deps.config.publish_timeout_ms),
      timeoutMs: deps.config.transaction_timeout_ms,
    });
    for (const row of rows) {
      const until = renewed.get(row.id);
      if (until !== undefined) row.claimed_until = until;
    }
    return { endsAt: startedAt + deps.config.visibility_timeout_seconds * 1000, kept: new Set(renewed.keys()) };
  } catch (err) {
    deps.logger.warn(
      { err, rows: rows.length },
      'could not renew an outbox claim window; the rows are sent within what is left of it',
    );
    return null;
  }
}
