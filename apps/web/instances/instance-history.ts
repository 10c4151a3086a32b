import type { TransitionsPage } from '@/trpc/api-types';
import type { InstanceDetail, InstanceTransition } from './instance-types';

/**
 * What an instance page holds (ADR 0035): the instance as last read, and the transitions read so
 * far — the newest page, those polled since, and the older pages loaded — oldest first, each once.
 * `historyTruncated` says older transitions remain.
 */
export type HeldInstance = InstanceDetail;

const byId = (a: InstanceTransition, b: InstanceTransition) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1);

function mergeTransitions(held: readonly InstanceTransition[], incoming: readonly InstanceTransition[]) {
  const rows = new Map(held.map((t) => [t.id, t]));
  for (const t of incoming) rows.set(t.id, t);
  return [...rows.values()].sort(byId);
}

/** The newest transition id held: a poll asks only for what came after it. */
export const newestHeldTransition = (h: HeldInstance) => h.history.at(-1)?.id;

/** A poll's answer (`history` only the transitions after the newest held) merged into what is held. */
export const withPolled = (held: HeldInstance, polled: InstanceDetail): HeldInstance => ({
  ...polled,
  history: mergeTransitions(held.history, polled.history),
  historyTruncated: held.historyTruncated,
});

/** A page of older transitions added. */
export const withOlderTransitions = (held: HeldInstance, page: TransitionsPage): HeldInstance => ({
  ...held,
  history: mergeTransitions(held.history, page.rows),
  historyTruncated: page.more,
});
