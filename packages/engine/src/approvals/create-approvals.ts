import type { Prisma } from '../generated/prisma/client.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { assertUuid } from '../input/assert-uuid.ts';
import { textRules } from '../input/input-limits.ts';
import type { BulkRepairResult } from '../repairs/apply-bulk-repair.ts';
import type { RepairResult } from '../repairs/repair-effects.ts';
import type { RepairDeps } from '../repairs/repair-handler.ts';
import { countPendingApprovals } from '../store/approvals/count-pending-approvals.ts';
import { expireApprovals } from '../store/approvals/expire-approvals.ts';
import { findApproval } from '../store/approvals/find-approval.ts';
import { listApprovals } from '../store/approvals/list-approvals.ts';
import { readApprovalPolicy } from '../store/approvals/read-approval-policy.ts';
import { writeApprovalPolicy } from '../store/approvals/write-approval-policy.ts';
import { parseApprovalPolicy, toStoredPolicy, type StoredApprovalPolicy } from './approval-policy.ts';
import {
  toApprovalView,
  type ApprovalAudit,
  type ApprovalView,
  type AwaitingApproval,
  type DecidedDraft,
} from './approval-view.ts';
import { createBulkAppliers } from './bulk-appliers.ts';
import { approveRepair, rejectRepair, resumeInterruptedBulks } from './decide-approval.ts';
import { submitBulkRepair, submitRepair } from './submit-repair.ts';

export interface PolicyChange {
  before: StoredApprovalPolicy;
  after: StoredApprovalPolicy;
  actor: string;
}

/**
 * Two-person approvals of repair commands (ADR 0020), shared by an embedding service, the control
 * plane and the CLI. `submit` applies a command the stored policy does not gate, and stores a gated
 * one as a pending approval; a second operator approves it (applied then, still guarded by its
 * expected state) or rejects it. `engine.repairs.apply` itself stays ungated: it is what approval
 * applies through, and what trusted code calls when it needs no second operator.
 *
 * @example
 * const r = await engine.approvals.submit({ kind: 'run.terminate', target: { runId }, expected: { runStatus: 'Waiting' },
 *   actor: 'ana', reason: 'duplicate order', idempotencyKey: key });
 * if (r.status === 'awaiting_approval') await engine.approvals.approve(r.approvalId, 'ben');
 */
export interface Approvals {
  /**
   * One command: applied now, or (gated) stored as a pending approval. `audit` runs in the same
   * transaction as a new draft's row (not for a replay, nor for a command applied at once, which has
   * its own audit row), so a host's trail row and the draft commit together.
   */
  submit(
    command: unknown,
    options?: { audit?: ApprovalAudit },
  ): Promise<RepairResult | AwaitingApproval | DecidedDraft>;
  /** A bulk command: applied now, or (gated kind, or over the bulk threshold) one approval for the whole bulk. `audit` as for `submit`. */
  submitBulk(
    command: unknown,
    options?: { audit?: ApprovalAudit },
  ): Promise<BulkRepairResult | AwaitingApproval | DecidedDraft>;
  /** Applies a pending approval as `approver` (never its drafter); `via` says how the approver acted (an API token), for the audit row. */
  approve(id: unknown, approver: string, options?: { via?: string }): Promise<ApprovalView>;
  /**
   * Rejects a pending approval as `approver` (never its drafter), with a reason. `audit` runs in the
   * same transaction as the decision.
   */
  reject(id: unknown, approver: string, reason: unknown, options?: { audit?: ApprovalAudit }): Promise<ApprovalView>;
  /** Newest first, keyset-paged; expired drafts are marked expired first. */
  list(filter: {
    statuses?: readonly string[];
    before?: { at: Date; id: string };
    limit: number;
  }): Promise<ApprovalView[]>;
  get(id: unknown): Promise<ApprovalView | null>;
  /**
   * Finishes approved bulks whose approver stopped part-way (claimed longer than
   * `approvals.resume_applying_after_seconds` ago): the rest of their items are applied, the ones
   * already applied replayed. Returns how many bulks were finished. The control plane calls it on
   * start and every minute; a host that approves bulks itself should too.
   */
  resumeInterrupted(): Promise<number>;
  /**
   * For a graceful stop (ADR 0121): no bulk is claimed or resumed from now on; the approved bulks
   * this engine is applying go on for up to `graceMs` (default 2000), then each ends after the item
   * in hand (waiting up to `waitMs` more, default 5000). A bulk so ended stays `applying`, marked for
   * any engine's `resumeInterrupted` to finish at its next call, is logged at warn (approval, items
   * done of all), and its `approve` throws `approval_interrupted` saying how far it got.
   */
  stopApplying(options?: { graceMs?: number; waitMs?: number }): Promise<void>;
  /** Approvals waiting for a second operator now. */
  countPending(): Promise<number>;
  /** The stored policy (the default until an admin sets one). */
  policy(): Promise<StoredApprovalPolicy>;
  /**
   * Replaces the policy as `actor`. `audit` runs in the same transaction as the write, so a host's
   * audit row and the change commit together.
   */
  setPolicy(
    policy: unknown,
    options: { actor: string; audit?: (tx: Prisma.TransactionClient, change: PolicyChange) => Promise<void> },
  ): Promise<StoredApprovalPolicy>;
}

export function createApprovals(deps: RepairDeps, nudge: () => void): Approvals {
  const db = deps.runtime.prisma;
  const now = () => deps.runtime.clock.now();
  const bulks = createBulkAppliers(deps.runtime.logger);
  const nudging = async <T>(p: Promise<T>) => {
    const r = await p;
    nudge();
    return r;
  };
  return {
    submit: (cmd, options) => nudging(submitRepair(deps, cmd, options?.audit)),
    submitBulk: (cmd, options) => nudging(submitBulkRepair(deps, cmd, options?.audit)),
    approve: (id, approver, options) => nudging(approveRepair(deps, bulks, id, approver, options)),
    reject: (id, approver, reason, options) => rejectRepair(deps, id, approver, reason, options?.audit),
    resumeInterrupted: () => nudging(resumeInterruptedBulks(deps, bulks)),
    stopApplying: (options) => bulks.stop({ graceMs: options?.graceMs ?? 2000, waitMs: options?.waitMs ?? 5000 }),
    async list(filter) {
      await expireApprovals(db, now());
      return (await listApprovals(db, filter)).map(toApprovalView);
    },
    async get(id) {
      const key = assertUuid(id, 'id');
      await expireApprovals(db, now());
      const row = await findApproval(db, key);
      return row ? toApprovalView(row) : null;
    },
    countPending: () => countPendingApprovals(db, now()),
    policy: async () => toStoredPolicy(await readApprovalPolicy(db)),
    async setPolicy(raw, { actor, audit }) {
      const next = parseApprovalPolicy(raw);
      assertStorableText(actor, 'actor', textRules(deps.runtime.config.limits));
      return db.$transaction(async (tx) => {
        const before = toStoredPolicy(await readApprovalPolicy(tx));
        await writeApprovalPolicy(tx, { ...next, at: now(), by: actor });
        const after = toStoredPolicy(await readApprovalPolicy(tx));
        await audit?.(tx, { before, after, actor });
        deps.runtime.logger.info({ actor, before, after }, 'approval policy changed');
        return after;
      });
    },
  };
}
