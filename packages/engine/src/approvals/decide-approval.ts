import type { Json } from '../definitions/define-action.ts';
import { EngineError } from '../errors/engine-error.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { assertUuid } from '../input/assert-uuid.ts';
import { textRules } from '../input/input-limits.ts';
import { randomUUID } from 'node:crypto';
import { applyBulkRepair } from '../repairs/apply-bulk-repair.ts';
import { applyRepair, type ApprovalGuard } from '../repairs/apply-repair.ts';
import type { RepairDeps } from '../repairs/repair-handler.ts';
import { expireApprovals } from '../store/approvals/expire-approvals.ts';
import { findApproval, type DbRepairApproval } from '../store/approvals/find-approval.ts';
import { findInterruptedBulks } from '../store/approvals/find-interrupted-bulks.ts';
import { lockApproval } from '../store/approvals/lock-approval.ts';
import { markBulkLeft, takeLeftBulk } from '../store/approvals/mark-bulk-left.ts';
import { settleApproval } from '../store/approvals/settle-approval.ts';
import { inOperatorTransaction } from '../api/operator-transaction.ts';
import { toApprovalView, type ApprovalAudit, type ApprovalView } from './approval-view.ts';
import type { BulkAppliers, BulkInFlight } from './bulk-appliers.ts';

/**
 * A second operator approves a gated command (ADR 0020): it is applied through the ordinary repair
 * path (`applyRepair`), still guarded by the state it was drafted against, in ONE transaction with
 * the approval's row change and the audit row (which names the approver). The approval's row is
 * locked first, so of two approvers at once exactly one applies; the other gets `approval_decided`.
 * A state that changed since the draft ends the approval as `conflict` and throws `repair_conflict`
 * with the state now: nothing else changes. The drafter may not approve (`approval_by_drafter`).
 * A bulk is claimed first (pending → applying), then applied item by item, each with its audit row.
 */
export async function approveRepair(
  deps: RepairDeps,
  bulks: BulkAppliers,
  id: unknown,
  approver: string,
  options: { via?: unknown } = {},
): Promise<ApprovalView> {
  const via = approverVia(deps, options.via);
  const row = await decidable(deps, id, approver, 'approve');
  if (row.bulk) return approveBulk(deps, bulks, row, approver, via);
  const now = () => deps.runtime.clock.now();
  const guard: ApprovalGuard = {
    approvalId: row.id,
    approver,
    ...(via === undefined ? {} : { approverVia: via }),
    async claim(tx) {
      const locked = await lockApproval(tx, row.id);
      if (!locked || locked.status !== 'pending') throw decided(locked ?? row);
      if (locked.expires_at <= now()) throw expired(locked);
    },
    async record(tx, o) {
      const result = { repairId: o.repairId, ...(o.result as object) } as Json;
      await settleApproval(tx, { id: row.id, from: 'pending', to: o.status, by: approver, at: o.at, result, via });
    },
  };
  await applyRepair(deps, row.payload, { guard });
  deps.runtime.logger.info({ approval: row.id, approver, command: row.command }, 'approved repair applied');
  return view(deps, row.id);
}

/** How the approver acted, as the caller names it (the control plane: the API token), checked as text. */
function approverVia(deps: RepairDeps, via: unknown): string | undefined {
  if (via === undefined) return undefined;
  if (typeof via !== 'string') throw new EngineError('invalid_input', 'via: must be text', { field: 'via' });
  assertStorableText(via, 'via', textRules(deps.runtime.config.limits));
  return via;
}

/**
 * Claims a bulk (pending → applying), fixing with the claim what every pass over it writes (ADR
 * 0121): the approver, the API token they approved with, and the one bulk id of all its items.
 */
async function approveBulk(
  deps: RepairDeps,
  bulks: BulkAppliers,
  row: DbRepairApproval,
  approver: string,
  via?: string,
): Promise<ApprovalView> {
  if (bulks.closed)
    throw new EngineError(
      'approval_interrupted',
      `approval ${row.id} was not applied: this engine is stopping. Nothing changed; it is still pending: approve it again (on another control plane)`,
      { retryable: true, details: { approvalId: row.id, status: 'pending', done: 0, applied: 0, of: itemCount(row) } },
    );
  const at = deps.runtime.clock.now();
  const bulkId = randomUUID();
  const claimed = await settleApproval(deps.runtime.prisma, {
    id: row.id,
    from: 'pending',
    to: 'applying',
    by: approver,
    at,
    unexpiredAt: at,
    via: via ?? null,
    bulkId,
  });
  if (!claimed) throw decided((await findApproval(deps.runtime.prisma, row.id)) ?? row);
  await applyClaimedBulk(deps, bulks, { ...row, decided_via: via ?? null, bulk_id: bulkId }, approver);
  return view(deps, row.id);
}

/**
 * Applies a claimed (`applying`) bulk item by item and settles it as applied. Each item's
 * idempotency key is the bulk's key and its target, so running this again over a bulk that was
 * interrupted part-way (see resumeInterruptedBulks) replays the items already applied, with no
 * second effect, and applies the rest; two appliers at once meet on each item's unique key. Every
 * pass writes the claim's bulk id and approver's token (`row.bulk_id`, `row.decided_via`). A stop of
 * this engine ends the bulk between two items (ADR 0121): it stays `applying`, marked for any
 * resumer's next pass, the stop is logged at warn, and `approval_interrupted` says how far it got.
 */
async function applyClaimedBulk(
  deps: RepairDeps,
  bulks: BulkAppliers,
  row: DbRepairApproval,
  approver: string,
): Promise<void> {
  const via = row.decided_via;
  // A bulk claimed before its id was kept with the claim (migration 0033) gets one now.
  const bulkId = row.bulk_id ?? randomUUID();
  const inFlight: BulkInFlight = { approvalId: row.id, bulkId, of: itemCount(row), done: 0, applied: 0 };
  // Tracked to its end (the left mark, the settle and their logs): a stop waits for all of it.
  await bulks.track(inFlight, async () => {
    const result = await applyBulkRepair(deps, row.payload, {
      approvedAs: { approvalId: row.id, approver, ...(via === null ? {} : { approverVia: via }) },
      bulkId,
      keepGoing: () => !bulks.stopping,
      onItem: (item) => {
        inFlight.done += 1;
        if (item.outcome === 'applied') inFlight.applied += 1;
      },
    });
    if (result.items.length < inFlight.of) {
      await markBulkLeft(deps.runtime.prisma, row.id, deps.runtime.clock.now());
      const { done, applied, of } = inFlight;
      deps.runtime.logger.warn(
        { approval: row.id, approver, command: row.command, bulkId, done, applied, of },
        `stopping: approved bulk ${row.id} left part-applied, ${done} of ${of} items done (${applied} applied); ` +
          "any replica's bulk resumer applies the rest at its next pass",
      );
      throw new EngineError(
        'approval_interrupted',
        `approval ${row.id}: the control plane stopped while applying it; ${done} of ${of} items done (${applied} applied). ` +
          'The rest are applied by a bulk resumer at its next pass; nothing to do again',
        { details: { approvalId: row.id, status: 'applying', bulkId, done, applied, of } },
      );
    }
    // An item whose target another session held (ADR 0132) was not decided: the approved bulk is not
    // settled while it is owed. It stays `applying`, marked for any replica's resumer, which applies
    // what is left (the applied items replay) at its next pass (review 56).
    const busy = result.items.filter((item) => item.outcome === 'busy').map((item) => item.target);
    if (busy.length > 0) {
      await markBulkLeft(deps.runtime.prisma, row.id, deps.runtime.clock.now(), result as unknown as Json);
      const { applied, of } = inFlight;
      const named = busy.map((t) => `${t.type} ${t.id}`).join(', ');
      deps.runtime.logger.warn(
        { approval: row.id, approver, command: row.command, bulkId, applied, of, busy },
        `approved bulk ${row.id}: ${busy.length} item(s) busy (another session held the target); it stays applying and a bulk resumer applies them at its next pass`,
      );
      throw new EngineError(
        'target_busy',
        `approval ${row.id}: ${applied} of ${of} items applied; not yet ${named}: another session held ${busy.length === 1 ? 'it' : 'them'} past the transaction limit. ` +
          'The approval stays applying and a bulk resumer applies what is left at its next pass; nothing to do again',
        { details: { approvalId: row.id, status: 'applying', bulkId, applied, of, busy } },
      );
    }
    await settleApproval(deps.runtime.prisma, {
      id: row.id,
      from: 'applying',
      to: 'applied',
      by: approver,
      at: deps.runtime.clock.now(),
      result: result as unknown as Json,
      bulkId,
    });
    deps.runtime.logger.info(
      { approval: row.id, approver, command: row.command, applied: result.applied },
      'approved bulk repair applied',
    );
  });
}

/** How many items a bulk approval names. */
function itemCount(row: DbRepairApproval): number {
  const items = (row.payload as { items?: unknown } | null)?.items;
  return Array.isArray(items) ? items.length : 0;
}

/**
 * Finishes bulks whose approver stopped part-way: any `applying` bulk claimed longer than
 * `approvals.resume_applying_after_seconds` ago, or left part-applied by a graceful stop, is applied
 * again under its approver's name and token, with its bulk id (items already applied are replayed,
 * not repeated). Returns how many were finished; a stop of this engine ends the pass.
 */
export async function resumeInterruptedBulks(deps: RepairDeps, bulks: BulkAppliers): Promise<number> {
  const { resume_applying_after_seconds: after } = deps.runtime.config.approvals;
  const claimedBefore = new Date(deps.runtime.clock.now().getTime() - after * 1000);
  let finished = 0;
  for (const row of await findInterruptedBulks(deps.runtime.prisma, claimedBefore, 100)) {
    if (bulks.closed) break;
    // A bulk left by a graceful stop is taken by one resumer (the mark cleared); the others leave it
    // until its claim is old, as any claim.
    const old = (row.decided_at?.getTime() ?? 0) < claimedBefore.getTime();
    if (row.left_at && !(await takeLeftBulk(deps.runtime.prisma, row.id)) && !old) continue;
    deps.runtime.logger.warn(
      { approval: row.id, approver: row.decided_by, command: row.command, claimedAt: row.decided_at },
      'an approved bulk repair was interrupted part-way: applying the rest',
    );
    try {
      await applyClaimedBulk(deps, bulks, row, row.decided_by ?? 'unknown approver');
    } catch (err) {
      if (err instanceof EngineError && err.code === 'approval_interrupted') break;
      // Items still busy: the bulk is left for the next pass; the others go on.
      if (err instanceof EngineError && err.code === 'target_busy') continue;
      throw err;
    }
    finished += 1;
  }
  return finished;
}

/**
 * A second operator rejects a gated command: nothing is applied, the approval records who and why.
 * `audit` writes the host's row for the rejection in the same transaction as the decision.
 */
export async function rejectRepair(
  deps: RepairDeps,
  id: unknown,
  approver: string,
  reason: unknown,
  audit?: ApprovalAudit,
): Promise<ApprovalView> {
  if (typeof reason !== 'string' || reason.trim() === '')
    throw new EngineError('invalid_input', 'reason: say why the command is rejected', { field: 'reason' });
  assertStorableText(reason, 'reason', textRules(deps.runtime.config.limits));
  const row = await decidable(deps, id, approver, 'reject');
  const at = deps.runtime.clock.now();
  const decision = {
    id: row.id,
    from: 'pending',
    to: 'rejected',
    by: approver,
    at,
    reason,
    unexpiredAt: at,
  } as const;
  const done = !audit
    ? await settleApproval(deps.runtime.prisma, decision)
    : await inOperatorTransaction(deps.runtime, async (tx) => {
        if (!(await settleApproval(tx, decision))) return false;
        const rejected = await findApproval(tx, row.id);
        if (!rejected) throw new EngineError('approval_not_found', `no approval ${row.id}`);
        await audit(tx, toApprovalView(rejected));
        return true;
      });
  if (!done) throw decided((await findApproval(deps.runtime.prisma, row.id)) ?? row);
  deps.runtime.logger.info({ approval: row.id, approver, command: row.command }, 'repair rejected');
  return view(deps, row.id);
}

/** The approval, if this approver may decide it now; otherwise the typed error that says why not. */
async function decidable(
  deps: RepairDeps,
  id: unknown,
  approver: string,
  verb: 'approve' | 'reject',
): Promise<DbRepairApproval> {
  const key = assertUuid(id, 'id');
  assertStorableText(approver, 'approver', textRules(deps.runtime.config.limits));
  const db = deps.runtime.prisma;
  const row = await findApproval(db, key);
  if (!row) throw new EngineError('approval_not_found', `no approval ${key}; list them with approvals.list`);
  if (row.drafter === approver)
    throw new EngineError(
      'approval_by_drafter',
      `${approver} drafted this ${row.command}, so cannot ${verb} it: a second operator must (two-person rule)`,
      { details: { approvalId: row.id, drafter: row.drafter } },
    );
  const now = deps.runtime.clock.now();
  if (row.status === 'pending' && row.expires_at <= now) {
    await expireApprovals(db, now);
    throw expired(row);
  }
  if (row.status !== 'pending') throw decided(row);
  return row;
}

function decided(row: DbRepairApproval): EngineError {
  return new EngineError(
    'approval_decided',
    `approval ${row.id} is already ${row.status}${row.decided_by ? ` (by ${row.decided_by})` : ''}; nothing changed`,
    { details: { approvalId: row.id, status: row.status, decidedBy: row.decided_by } },
  );
}

function expired(row: DbRepairApproval): EngineError {
  return new EngineError(
    'approval_expired',
    `approval ${row.id} expired at ${row.expires_at.toISOString()} without a decision; nothing changed. Draft the command again against the current state`,
    { details: { approvalId: row.id, status: 'expired' } },
  );
}

async function view(deps: RepairDeps, id: string): Promise<ApprovalView> {
  const row = await findApproval(deps.runtime.prisma, id);
  if (!row) throw new EngineError('approval_not_found', `no approval ${id}`);
  return toApprovalView(row);
}
