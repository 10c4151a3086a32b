import { recordAuditEvent } from '../../auth/record-audit-event.ts';
import type { SignedInContext } from '../trpc.ts';
import { tokenVia } from '../token-via.ts';

/**
 * One row of the audit trail for an operator's action that has no repair row of its own (review 31):
 * a repair drafted for approval, a draft rejected, a run started. It names the operator and, for an
 * API token, the token. Written once the engine's own write committed, in a statement of its own: a
 * process that dies between the two leaves the action without its trail row, never a row without
 * the action (the approvals and runs themselves say who drafted, decided or started what).
 */
export async function recordOperatorAction(
  ctx: SignedInContext,
  e: {
    action: 'repair_drafted' | 'repair_rejected' | 'run_started';
    targetType: string;
    targetId: string;
    outcome: string;
    reason?: string;
    details?: Record<string, string | number | boolean | null>;
  },
): Promise<void> {
  const { operator } = ctx.session;
  await recordAuditEvent(ctx.db.prisma, {
    at: ctx.auth.now(),
    actorId: operator.id,
    actor: operator.name,
    action: e.action,
    targetType: e.targetType,
    targetId: e.targetId,
    outcome: e.outcome,
    ...(e.reason === undefined ? {} : { reason: e.reason }),
    address: ctx.address,
    details: { ...e.details, ...(ctx.session.via === 'token' ? { via: tokenVia(ctx.session.token) } : {}) },
  });
}
