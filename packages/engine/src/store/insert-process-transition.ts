import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

export type TransitionOutcome = 'applied' | 'ignored' | 'skipped_quarantined' | 'quarantined' | 'repair';

/**
 * Appends one row to an instance's history: from, to, which message, when, and what came of it. It
 * carries the instance's process so the overview's chart counts by process without reading the
 * instances (ADR 0040).
 */
export async function insertProcessTransition(
  db: Db,
  args: {
    instanceId: string;
    processName: string;
    from: string;
    to: string;
    messageId: string;
    messageType: string;
    outcome: TransitionOutcome;
    detail: Json | null;
    now: Date;
  },
): Promise<void> {
  await db.$executeRaw`
    insert into "sagaflow"."process_transitions" (instance_id, process_name, from_state, to_state, message_id, message_type, outcome, detail, at)
    values (${args.instanceId}::uuid, ${args.processName}, ${args.from}, ${args.to}, ${args.messageId}, ${args.messageType}, ${args.outcome},
            ${args.detail === null ? null : JSON.stringify(args.detail)}::jsonb, ${args.now}::timestamptz)`;
}
