import { recordAuditEvent, type AuditTransaction } from '../../auth/record-audit-event.ts';
import type { SignedInContext } from '../trpc.ts';
import { tokenVia } from '../token-via.ts';

/** An operator's action that has no repair row of its own: a repair drafted for approval, a draft rejected, a run started. */
export interface OperatorAction {
  action: 'repair_drafted' | 'repair_rejected' | 'run_started';
  targetType: string;
  targetId: string;
  outcome: string;
  reason?: string;
  details?: Record<string, string | number | boolean | null>;
}

/**
 * One row of the audit trail for an operator's action (review 31), naming the operator and, for an
 * API token, the token and who created it. `tx` is the engine's transaction that makes the action (its `audit` option),
 * so the row and the draft, decision or run commit together or not at all (ADR 0107).
 */
export async function recordOperatorAction(
  ctx: SignedInContext,
  tx: AuditTransaction,
  e: OperatorAction,
): Promise<void> {
  const { operator } = ctx.session;
  await recordAuditEvent(tx, {
    at: ctx.auth.now(),
    actorId: operator.id,
    actor: operator.name,
    action: e.action,
    targetType: e.targetType,
    targetId: e.targetId,
    outcome: e.outcome,
    ...(e.reason === undefined ? {} : { reason: e.reason }),
    address: ctx.address,
    // A token's creator is the person who held its secret (an admin may create one for anyone): the
    // two-person rule reads it back from a draft's row (ADR 0111).
    details: {
      ...e.details,
      ...(ctx.session.via === 'token'
        ? { via: tokenVia(ctx.session.token), tokenCreatedBy: ctx.session.token.createdBy }
        : {}),
    },
  });
}
