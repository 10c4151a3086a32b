import type { Json } from '../definitions/define-action.ts';
import { listProcessTransitions } from '../store/list-process-transitions.ts';
import type { ProcessDeps } from './process-deps.ts';
import { requireInstanceId } from './run-operator-command.ts';

/** One row of an instance's history: from, to, which message, what came of it, when. */
export interface InstanceTransition {
  id: string;
  from: string;
  to: string;
  messageId: string;
  messageType: string;
  /** applied | ignored | skipped_quarantined | quarantined | repair */
  outcome: string;
  /**
   * Why (an ignored message's reason, a repair's operator and reason, a kept payload). A skip
   * release's row keeps the message it skipped, whole, in `skippedMessage`.
   */
  detail: Json | null;
  at: Date;
}

/**
 * An instance's transition history, oldest first: its newest `limit` rows (at most 1000), and
 * whether older ones were left out. Read-only; exact redeliveries leave no row (the inbox drops them).
 */
export async function instanceHistory(
  deps: Pick<ProcessDeps, 'prisma'>,
  instanceId: string,
  opts: { limit?: number } = {},
): Promise<{ transitions: InstanceTransition[]; truncated: boolean }> {
  const id = requireInstanceId(instanceId);
  const limit = Math.min(Math.max(Math.trunc(opts.limit ?? 500), 1), 1000);
  const rows = await listProcessTransitions(deps.prisma, { instanceId: id, limit: limit + 1 });
  const truncated = rows.length > limit;
  const transitions = (truncated ? rows.slice(0, limit) : rows).reverse().map((r) => ({
    id: r.id,
    from: r.from_state,
    to: r.to_state,
    messageId: r.message_id,
    messageType: r.message_type,
    outcome: r.outcome,
    detail: r.detail ?? null,
    at: r.at,
  }));
  return { transitions, truncated };
}
