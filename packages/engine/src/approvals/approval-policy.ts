import { z } from 'zod';
import { EngineError } from '../errors/engine-error.ts';
import { zodIssueField } from '../input/zod-issue-field.ts';
import { maxBulkItems } from '../repairs/apply-bulk-repair.ts';
import { repairCatalogue } from '../repairs/repair-catalogue.ts';
import type { RepairKind } from '../repairs/repair-command.ts';
import type { DbApprovalPolicy } from '../store/approvals/read-approval-policy.ts';

/** Which repair commands wait for a second operator (ADR 0020). */
export interface ApprovalPolicy {
  /** Command kinds that wait for a second operator's approval. */
  gatedCommands: RepairKind[];
  /** A bulk repair over more than this many targets waits for approval (whatever its kind); null = never. */
  bulkThreshold: number | null;
}

export interface StoredApprovalPolicy extends ApprovalPolicy {
  /** True when no admin has set a policy: the default below applies. */
  isDefault: boolean;
  updatedAt: string | null;
  updatedBy: string | null;
}

const kinds = Object.keys(repairCatalogue) as RepairKind[];

/**
 * Out of the box, safe: every command the catalogue marks destructive (terminate, complete a step,
 * resume from a step, force a transition) and any bulk over 10 targets needs a second operator.
 */
export const defaultApprovalPolicy: ApprovalPolicy = {
  gatedCommands: kinds.filter((k) => repairCatalogue[k].destructive).sort(),
  bulkThreshold: 10,
};

const policySchema = z.strictObject({
  gatedCommands: z.array(z.enum(kinds as [RepairKind, ...RepairKind[]])).max(kinds.length),
  bulkThreshold: z.number().int().min(0).max(maxBulkItems).nullable(),
});

/** Validates a policy an admin sets; bad input is `invalid_input` naming the field. */
export function parseApprovalPolicy(raw: unknown): ApprovalPolicy {
  const parsed = policySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = zodIssueField(issue, 'policy');
    const message =
      issue?.code === 'invalid_value' && field.startsWith('gatedCommands.')
        ? `must be one of ${kinds.join(', ')}`
        : (issue?.message ?? 'invalid');
    throw new EngineError('invalid_input', `${field}: ${message}`, { field });
  }
  return { gatedCommands: [...new Set(parsed.data.gatedCommands)].sort(), bulkThreshold: parsed.data.bulkThreshold };
}

/** The stored policy as callers see it (the default when none was set). */
export function toStoredPolicy(row: DbApprovalPolicy | null): StoredApprovalPolicy {
  if (!row) return { ...defaultApprovalPolicy, isDefault: true, updatedAt: null, updatedBy: null };
  return {
    gatedCommands: row.gated_commands.filter((k): k is RepairKind => k in repairCatalogue),
    bulkThreshold: row.bulk_threshold,
    isDefault: false,
    updatedAt: row.updated_at.toISOString(),
    updatedBy: row.updated_by,
  };
}

/** Whether a command (a bulk of `items` targets, when given) must wait for a second operator. */
export function policyGates(policy: ApprovalPolicy, kind: string, items?: number): boolean {
  if ((policy.gatedCommands as string[]).includes(kind)) return true;
  return items !== undefined && policy.bulkThreshold !== null && items > policy.bulkThreshold;
}
