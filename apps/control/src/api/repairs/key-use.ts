import { z } from 'zod';
import { storableText } from '../storable-text.ts';
import { runOfTarget } from '../audit/audit-entry.ts';
import type { ApiContext } from '../trpc.ts';

/**
 * What became of an idempotency key (ADR 0118: one key is one draft or one decision), read-only: the
 * console asks it before it offers a kept draft back (ADR 0120 addendum), so a draft applied since (by a
 * sibling tab, the lost session's own Apply, anyone) is not offered as "not applied".
 *
 * A single command's key names at most one audit row (`repair_commands`) and one approval
 * (`repair_approvals`). A bulk's items are audited under `<key>:<target id>` (apply-bulk-repair.ts), so a
 * bulk is asked with its targets' ids; a gated bulk's approval has the bulk's own key.
 */
export const keyUseInput = z
  .object({
    idempotencyKey: storableText(1000).min(1),
    /** A bulk draft's target ids: each item's audit row is under `<key>:<id>`. */
    items: z.array(storableText(1000)).min(1).max(1000).optional(),
  })
  .strict();

export interface KeyDecision {
  /** The audit row's id (the repair). */
  repairId: string;
  at: string;
  actor: string;
  command: string;
  /** applied | conflict | refused */
  status: string;
  targetType: string;
  targetId: string;
  runId: string | null;
  /** The second operator who approved it, when it was gated. */
  approvedBy: string | null;
}

export interface KeyDraft {
  approvalId: string;
  createdAt: string;
  drafter: string;
  command: string;
  /** As stored, except a pending draft past its deadline, which can no longer be approved: `expired`. */
  status: string;
  expiresAt: string;
  decidedBy: string | null;
  decidedAt: string | null;
  decisionReason: string | null;
}

/** Every audit row of the key (one for a single command; one per item already decided for a bulk), oldest first, and its approval. */
export interface KeyUse {
  decisions: KeyDecision[];
  draft: KeyDraft | null;
}

export async function readKeyUse(
  ctx: Pick<ApiContext, 'db'>,
  input: z.output<typeof keyUseInput>,
  now = new Date(),
): Promise<KeyUse> {
  const db = ctx.db.prisma;
  const keys = input.items
    ? [...new Set(input.items)].map((id) => `${input.idempotencyKey}:${id}`)
    : [input.idempotencyKey];
  const [rows, approval] = await Promise.all([
    db.repairCommand.findMany({ where: { idempotency_key: { in: keys } }, orderBy: [{ at: 'asc' }, { id: 'asc' }] }),
    db.repairApproval.findUnique({ where: { idempotency_key: input.idempotencyKey } }),
  ]);
  return {
    decisions: rows.map((r) => ({
      repairId: r.id,
      at: r.at.toISOString(),
      actor: r.actor,
      command: r.command,
      status: r.status,
      targetType: r.target_type,
      targetId: r.target_id,
      runId: runOfTarget(r.target_type, r.target_id),
      approvedBy: r.approved_by,
    })),
    draft: approval
      ? {
          approvalId: approval.id,
          createdAt: approval.created_at.toISOString(),
          drafter: approval.drafter,
          command: approval.command,
          status: approval.status === 'pending' && approval.expires_at <= now ? 'expired' : approval.status,
          expiresAt: approval.expires_at.toISOString(),
          decidedBy: approval.decided_by,
          decidedAt: approval.decided_at?.toISOString() ?? null,
          decisionReason: approval.decision_reason,
        }
      : null,
  };
}
