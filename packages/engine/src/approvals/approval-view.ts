import type { Json } from '../definitions/define-action.ts';
import type { DbRepairApproval } from '../store/approvals/find-approval.ts';
import type { ApprovalStatus } from '../store/approvals/settle-approval.ts';

/** A gated repair command and what became of it (ADR 0020). */
export interface ApprovalView {
  id: string;
  /** pending, applying (a bulk being applied), applied, conflict, refused, rejected or expired. */
  status: ApprovalStatus;
  command: string;
  bulk: boolean;
  /** The target (a bulk: type `bulk`, id the number of its targets; see `payload.items`). */
  target: { type: string; id: string };
  drafter: string;
  reason: string;
  idempotencyKey: string;
  createdAt: string;
  expiresAt: string;
  decidedBy: string | null;
  decidedAt: string | null;
  /** A rejection's reason. */
  decisionReason: string | null;
  /** The command as drafted: what approval applies. */
  payload: Json;
  /** What it would do when it was drafted (a bulk: one preview per target). */
  preview: Json;
  /** applied: the repair's id, state found and effects; conflict: the state found; refused: blockers; a bulk: per item. */
  result: Json | null;
}

/** The awaiting answer to a gated command: nothing was applied yet. */
export interface AwaitingApproval {
  status: 'awaiting_approval';
  approvalId: string;
  approval: ApprovalView;
  /** True when this key's draft already existed: this call drafted nothing new. */
  replayed: boolean;
}

export function toApprovalView(row: DbRepairApproval): ApprovalView {
  return {
    id: row.id,
    status: row.status as ApprovalStatus,
    command: row.command,
    bulk: row.bulk,
    target: { type: row.target_type, id: row.target_id },
    drafter: row.drafter,
    reason: row.reason,
    idempotencyKey: row.idempotency_key,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    decidedBy: row.decided_by,
    decidedAt: row.decided_at?.toISOString() ?? null,
    decisionReason: row.decision_reason,
    payload: row.payload as Json,
    preview: row.preview as Json,
    result: (row.result ?? null) as Json | null,
  };
}
