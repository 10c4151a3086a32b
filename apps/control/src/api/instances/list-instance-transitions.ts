import type { Database } from '@sagaflow/engine';

/** How many history rows one read returns: the newest ones, shown oldest first. */
export const historyLimit = 500;

interface DbTransition {
  id: string;
  from_state: string;
  to_state: string;
  message_id: string;
  message_type: string;
  outcome: string;
  detail: unknown;
  at: Date;
}

/** One row of an instance's history as the API returns it. */
export interface InstanceTransition {
  id: string;
  from: string;
  to: string;
  messageId: string;
  messageType: string;
  /** applied | ignored | skipped_quarantined | quarantined | repair (what the engine wrote). */
  outcome: string;
  detail: unknown;
  at: string;
}

/**
 * An instance's transition history (`sagaflow.process_transitions`), read-only. The engine exports
 * no read of it yet, so the control plane reads the table the engine writes; the newest
 * {@link historyLimit} rows, oldest first, and whether older ones were left out.
 */
export async function listInstanceTransitions(
  prisma: Pick<Database['prisma'], '$queryRaw'>,
  instanceId: string,
): Promise<{ transitions: InstanceTransition[]; truncated: boolean }> {
  const rows = await prisma.$queryRaw<DbTransition[]>`
    select id::text as id, from_state, to_state, message_id, message_type, outcome, detail, at
      from "sagaflow"."process_transitions"
     where instance_id = ${instanceId}::uuid
     order by id desc
     limit ${historyLimit + 1}::int`;
  const truncated = rows.length > historyLimit;
  const kept = truncated ? rows.slice(0, historyLimit) : rows;
  const transitions = kept.reverse().map((r) => ({
    id: r.id,
    from: r.from_state,
    to: r.to_state,
    messageId: r.message_id,
    messageType: r.message_type,
    outcome: r.outcome,
    detail: r.detail ?? null,
    at: r.at.toISOString(),
  }));
  return { transitions, truncated };
}
