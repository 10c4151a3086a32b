import type { Json } from '../definitions/define-action.ts';
import { EngineError } from '../errors/engine-error.ts';
import { assertInteger } from '../input/assert-integer.ts';
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
 * A window of an instance's transition history, oldest first: its newest `limit` rows (at most
 * 1000), or the `limit` rows just before the transition id `before`, and whether older ones were
 * left out (`truncated`); or, given `after`, the `limit` rows just after that id and whether newer
 * ones remain (ask again from the last). Ids are compared as bigints. Read-only; exact redeliveries
 * leave no row (the inbox drops them).
 */
export async function instanceHistory(
  deps: Pick<ProcessDeps, 'prisma'>,
  instanceId: string,
  opts: { limit?: number; before?: string; after?: string } = {},
): Promise<{ transitions: InstanceTransition[]; truncated: boolean }> {
  const id = requireInstanceId(instanceId);
  const limit = opts.limit === undefined ? 500 : assertInteger(opts.limit, 'limit', 1, 1000);
  const rows = await listProcessTransitions(deps.prisma, {
    instanceId: id,
    limit: limit + 1,
    before: transitionId(opts.before, 'before'),
    after: transitionId(opts.after, 'after'),
  });
  const truncated = rows.length > limit;
  const page = truncated ? rows.slice(0, limit) : rows;
  const transitions = (opts.after === undefined ? page.reverse() : page).map((r) => ({
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

/** A transition id as the history handed it out (decimal digits), or a refusal naming the option. */
function transitionId(text: string | undefined, option: 'before' | 'after'): bigint | undefined {
  if (text === undefined) return undefined;
  if (!/^[0-9]{1,19}$/.test(text) || BigInt(text) > 9223372036854775807n)
    throw new EngineError(
      'invalid_input',
      `${option} must be a transition id (decimal digits), got ${JSON.stringify(text.slice(0, 40))}`,
    );
  return BigInt(text);
}
