import type { Json } from '../definitions/define-action.ts';
import type { Prisma } from '../generated/prisma/client.ts';
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

/**
 * The answer to a key whose draft was already decided (ADR 0020: the same key shows what became of
 * it): `applied` (with the repair's id, the state it found and its effects, as the approval recorded
 * them), or the approval's end: `rejected`, `expired`, `conflict` (the state had moved when it was
 * approved) or `refused`. Nothing is done again.
 */
export interface DecidedDraft {
  status: 'applied' | 'rejected' | 'expired' | 'conflict' | 'refused';
  approvalId: string;
  approval: ApprovalView;
  replayed: true;
  /** applied: the repair's audit row (a bulk: absent; its items are in `approval.result`). */
  id?: string;
  effects?: Json;
  actual?: Json;
}

/** A replayed draft: still waiting, or what became of it. */
export function replayedDraft(row: DbRepairApproval): AwaitingApproval | DecidedDraft {
  const approval = toApprovalView(row);
  if (row.status === 'pending' || row.status === 'applying')
    return { status: 'awaiting_approval', approvalId: row.id, approval, replayed: true };
  const status = row.status as DecidedDraft['status'];
  const result = (row.result ?? null) as { repairId?: unknown; effects?: Json; actual?: Json } | null;
  return {
    status,
    approvalId: row.id,
    approval,
    replayed: true,
    ...(status === 'applied' && !row.bulk && result
      ? {
          ...(typeof result.repairId === 'string' ? { id: result.repairId } : {}),
          ...(result.effects === undefined ? {} : { effects: result.effects }),
          ...(result.actual === undefined ? {} : { actual: result.actual }),
        }
      : {}),
  };
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

/**
 * A host's own row for a decision on the trail (who drafted or rejected it), written by the callback
 * in the same transaction as the approval's row: both commit or neither does (ADR 0107).
 */
export type ApprovalAudit = (tx: Prisma.TransactionClient, approval: ApprovalView) => Promise<void>;
