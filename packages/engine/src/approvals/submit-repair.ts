import { randomUUID } from 'node:crypto';
import type { Json } from '../definitions/define-action.ts';
import { EngineError } from '../errors/engine-error.ts';
import {
  applyBulkRepair,
  parseBulk,
  type BulkRepairCommand,
  type BulkRepairResult,
} from '../repairs/apply-bulk-repair.ts';
import { applyRepair, auditNotApplied, expectationDrifted } from '../repairs/apply-repair.ts';
import { previewRepair } from '../repairs/preview-repair.ts';
import {
  parseRepairCommand,
  repairParams,
  repairTarget,
  sameRepairParams,
  type RepairCommand,
} from '../repairs/repair-command.ts';
import type { RepairResult } from '../repairs/repair-effects.ts';
import type { RepairDeps } from '../repairs/repair-handler.ts';
import { findApprovalByKey, type DbRepairApproval } from '../store/approvals/find-approval.ts';
import { insertApproval, isDuplicateApprovalKey, type NewApproval } from '../store/approvals/insert-approval.ts';
import { readApprovalPolicy } from '../store/approvals/read-approval-policy.ts';
import { findRepairCommand } from '../store/repairs/find-repair-command.ts';
import { lockRepairKey } from '../store/repairs/lock-repair-key.ts';
import { policyGates, toStoredPolicy } from './approval-policy.ts';
import { inOperatorTransaction } from '../api/operator-transaction.ts';
import {
  replayedDraft,
  toApprovalView,
  type ApprovalAudit,
  type AwaitingApproval,
  type DecidedDraft,
} from './approval-view.ts';

/**
 * Submits one repair command under the approval policy (ADR 0020). A command the policy does not
 * gate is applied at once (`engine.repairs.apply`). A gated one is previewed and stored as a pending
 * approval with its preview, drafter, reason, expected state and idempotency key, and nothing else
 * is written: the target is untouched until a second operator approves it. A draft whose expected
 * state already fails is refused as `repair_conflict` (nothing stored but its audit row). The same idempotency key
 * returns the same draft (or what became of it), never a second one. `audit` writes the host's row
 * for a new draft in the draft's transaction.
 */
export async function submitRepair(
  deps: RepairDeps,
  raw: unknown,
  audit?: ApprovalAudit,
): Promise<RepairResult | AwaitingApproval | DecidedDraft> {
  const cmd = parseRepairCommand(raw, deps.runtime.config.limits);
  const target = repairTarget(cmd);
  const db = deps.runtime.prisma;
  const drafted = await findApprovalByKey(db, cmd.idempotencyKey);
  if (drafted) return sameDraft(drafted, cmd.kind, target.id, repairParams(cmd));
  const policy = toStoredPolicy(await readApprovalPolicy(db));
  if (!policyGates(policy, cmd.kind) || (await findRepairCommand(db, cmd.idempotencyKey)))
    return applyRepair(deps, cmd);
  const preview = await previewRepair(deps, cmd);
  // A draft that could not apply even now is refused (and audited) before anyone is asked to approve it,
  // unless a submit of the same key drafted it meanwhile: then that draft is the answer (review 43).
  if (!preview.expectedHolds || preview.blockers.length > 0) {
    const refused = await auditNotApplied(
      deps,
      cmd,
      preview.expectedHolds ? 'refused' : 'conflict',
      preview.actual,
      preview.expectedHolds ? preview.blockers : [expectationDrifted],
      async (tx) => (await findApprovalByKey(tx, cmd.idempotencyKey)) !== null,
    );
    if (refused !== 'drafted') return refused;
    const drafted = await findApprovalByKey(db, cmd.idempotencyKey);
    if (!drafted) throw new EngineError('internal', `the draft of key ${cmd.idempotencyKey} cannot be read back`);
    return sameDraft(drafted, cmd.kind, target.id, repairParams(cmd));
  }
  return draft(
    deps,
    {
      drafter: cmd.actor,
      command: cmd.kind,
      targetType: target.type,
      targetId: target.id,
      bulk: false,
      payload: cmd as unknown as Json,
      preview: preview as unknown as Json,
      reason: cmd.reason,
      idempotencyKey: cmd.idempotencyKey,
    },
    audit,
  );
}

/**
 * The bulk form: a bulk of a gated kind, or over the policy's threshold, waits as ONE approval for
 * the whole bulk (applied item by item at approval); any other is applied now.
 */
export async function submitBulkRepair(
  deps: RepairDeps,
  raw: unknown,
  audit?: ApprovalAudit,
): Promise<BulkRepairResult | AwaitingApproval | DecidedDraft> {
  const items = parseBulk(deps, raw);
  const bulk = raw as BulkRepairCommand;
  const first = items[0] as RepairCommand;
  const db = deps.runtime.prisma;
  const drafted = await findApprovalByKey(db, bulk.idempotencyKey);
  if (drafted) return sameBulkDraft(deps, drafted, first.kind, items);
  const policy = toStoredPolicy(await readApprovalPolicy(db));
  if (!policyGates(policy, first.kind, items.length)) return applyBulkRepair(deps, raw);
  const previews: Json[] = [];
  for (const item of items) {
    const preview = await previewRepair(deps, item).catch((err: unknown) => {
      if (
        err instanceof EngineError &&
        (err.code === 'run_not_found' || err.code === 'instance_not_found' || err.code === 'outbox_not_found')
      )
        return { notFound: err.message };
      throw err;
    });
    previews.push({ target: repairTarget(item), ...preview } as unknown as Json);
  }
  // A bulk's draft never answers with one repair's result: a key a repair used is refused (decidedMeanwhile).
  return draft(
    deps,
    {
      drafter: first.actor,
      command: first.kind,
      targetType: 'bulk',
      targetId: `${items.length} targets`,
      bulk: true,
      // As parsed (ids in lower case, nothing but what a bulk carries), in the form applyBulkRepair takes.
      payload: storedBulk(bulk, items),
      preview: previews,
      reason: first.reason,
      idempotencyKey: bulk.idempotencyKey,
    },
    audit,
  ) as Promise<AwaitingApproval | DecidedDraft>;
}

async function draft(
  deps: RepairDeps,
  a: Omit<NewApproval, 'id' | 'createdAt' | 'expiresAt'>,
  audit: ApprovalAudit | undefined,
): Promise<AwaitingApproval | DecidedDraft | RepairResult> {
  const db = deps.runtime.prisma;
  const createdAt = deps.runtime.clock.now();
  const expiresAt = new Date(createdAt.getTime() + deps.runtime.config.approvals.expire_after_seconds * 1000);
  const id = randomUUID();
  const stored = { ...a, id, createdAt, expiresAt };
  try {
    // Under the key's lock, a key some call decided meanwhile (a refusal audited, a command applied)
    // is not drafted again: that decision is the key's answer (review 43).
    const used = await inOperatorTransaction(deps.runtime, async (tx) => {
      await lockRepairKey(tx, a.idempotencyKey);
      if (await findRepairCommand(tx, a.idempotencyKey)) return true;
      await insertApproval(tx, stored);
      if (!audit) return false;
      const row = await findApprovalByKey(tx, a.idempotencyKey);
      if (!row) throw new EngineError('internal', `approval ${id} was stored but cannot be read back`);
      await audit(tx, toApprovalView(row));
      return false;
    });
    if (used) return decidedMeanwhile(deps, a);
  } catch (err) {
    // Another call with the same key drafted it first: its draft is ours.
    const prior = isDuplicateApprovalKey(err) ? await findApprovalByKey(db, a.idempotencyKey) : null;
    if (!prior) throw err;
    return sameDraft(
      prior,
      a.command,
      a.targetId,
      a.bulk ? undefined : repairParams(a.payload as unknown as RepairCommand),
    );
  }
  deps.runtime.logger.info(
    { approval: id, command: a.command, target: a.targetId, drafter: a.drafter },
    'repair drafted: it waits for a second operator',
  );
  const row = await findApprovalByKey(db, a.idempotencyKey);
  if (!row) throw new EngineError('internal', `approval ${id} was stored but cannot be read back`);
  return { status: 'awaiting_approval', approvalId: id, approval: toApprovalView(row), replayed: false };
}

/**
 * The answer to a draft whose key a repair used first: a single command replays that repair's
 * result (or its refusal) as apply would; a bulk's key names no single repair, so it is bad input.
 */
async function decidedMeanwhile(
  deps: RepairDeps,
  a: Omit<NewApproval, 'id' | 'createdAt' | 'expiresAt'>,
): Promise<RepairResult> {
  if (!a.bulk) return applyRepair(deps, a.payload);
  throw new EngineError('invalid_input', `idempotencyKey: already used by a repair; use a fresh key for this bulk`, {
    field: 'idempotencyKey',
  });
}

/** A bulk as its approval stores it: the shared fields of its first item's command and each item's target and expectation. */
function storedBulk(bulk: BulkRepairCommand, items: RepairCommand[]): Json {
  const { target: _target, expected: _expected, ...shared } = items[0] as RepairCommand;
  return {
    ...shared,
    idempotencyKey: bulk.idempotencyKey,
    items: items.map((item) => ({ target: item.target, expected: item.expected })),
  } as unknown as Json;
}

/**
 * An existing bulk draft of this key, if it is the same kind over the same targets; a key reused for a
 * bulk over other targets is bad input (ADR 0020), as for a single command (review 30).
 */
function sameBulkDraft(
  deps: RepairDeps,
  row: DbRepairApproval,
  kind: string,
  items: RepairCommand[],
): AwaitingApproval | DecidedDraft {
  const targets = (cmds: RepairCommand[]) => cmds.map((c) => repairTarget(c).id).join(' ');
  const stored = (() => {
    try {
      return row.bulk ? parseBulk(deps, row.payload) : [];
    } catch {
      return [];
    }
  })();
  if (row.command === kind && targets(stored) !== targets(items))
    throw new EngineError(
      'invalid_input',
      `idempotencyKey: already used by the draft of ${row.command} over ${row.target_id}; use a fresh key for another bulk`,
      { field: 'idempotencyKey' },
    );
  return sameDraft(row, kind, `${items.length} targets`);
}

/**
 * An existing draft of this key, if it is the same command (kind, target and, for a single command, its
 * parameters: review 39); a key reused for another command is bad input.
 */
function sameDraft(
  row: DbRepairApproval,
  kind: string,
  targetId: string,
  params?: { [key: string]: Json },
): AwaitingApproval | DecidedDraft {
  if (row.command !== kind || row.target_id !== targetId)
    throw new EngineError(
      'invalid_input',
      `idempotencyKey: already used by the draft of ${row.command} on ${row.target_type} ${row.target_id}; use a fresh key for another command`,
      { field: 'idempotencyKey' },
    );
  if (
    params !== undefined &&
    !row.bulk &&
    !sameRepairParams(repairParams(row.payload as unknown as RepairCommand), params)
  )
    throw new EngineError(
      'invalid_input',
      `idempotencyKey: already used by the draft of ${row.command} on ${row.target_type} ${row.target_id} with other parameters; use a fresh key for another command`,
      { field: 'idempotencyKey' },
    );
  return replayedDraft(row);
}
