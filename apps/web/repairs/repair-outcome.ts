import { TRPCClientError } from '@trpc/client';
import { apiErrorInfo } from '@/trpc/api-error';
import type { CurrentState } from './redraft';

const stateMoved = 'the expected state no longer holds';

/** What a refused repair's 409 carries (ADR 0019): the state now and what blocks it. */
export interface RepairRejection {
  /** The state changed under the draft (a conflict), or the command cannot apply as things are. */
  kind: 'changed' | 'refused';
  current: CurrentState | null;
  blockers: string[];
  message: string;
}

/**
 * The rejection in a 409 that carries a repair's body (a conflict or a refusal), or null for any other
 * error, shown as it is: a 409 without one is not the repair's answer (a busy target, `target_busy`:
 * nothing was decided, send it again; ADR 0132).
 */
export function repairRejection(error: unknown): RepairRejection | null {
  if (!(error instanceof TRPCClientError)) return null;
  const info = apiErrorInfo(error);
  if (info.httpStatus !== 409) return null;
  const repair = (error.data as { repair?: { current?: unknown; blockers?: unknown } } | undefined)?.repair;
  if (typeof repair !== 'object' || repair === null) return null;
  const all = Array.isArray(repair?.blockers) ? repair.blockers.filter((b) => typeof b === 'string') : [];
  // A changed state is reported as this blocker (and "drafted against … but … is now …").
  const changed = all.includes(stateMoved) || / but the \w+ is now /.test(info.message);
  const blockers = all.filter((b) => b !== stateMoved);
  return {
    kind: changed ? 'changed' : 'refused',
    current: (repair?.current ?? null) as CurrentState | null,
    blockers,
    message: info.message,
  };
}

/**
 * A result that waits for a second operator instead of acting (the approvals API may answer so):
 * `{ status: 'awaiting_approval', ... }`. The console says it was sent for approval.
 */
export function awaitsApproval(result: unknown): boolean {
  return typeof result === 'object' && result !== null && 'status' in result && result.status === 'awaiting_approval';
}

/** The approval a waiting result names (its id, for the link to the approvals queue). */
export function approvalIdOf(result: unknown): string {
  const id = (result as { approvalId?: unknown } | null)?.approvalId;
  return typeof id === 'string' ? encodeURIComponent(id) : '';
}

/**
 * A draft this key already had, decided since (the approvals API answers a replay so, ADR 0020):
 * what became of it and who decided it. Null for any other answer.
 */
export function decidedDraftOf(
  result: unknown,
): { status: string; decidedBy: string | null; reason: string | null; approvalId: string } | null {
  if (typeof result !== 'object' || result === null) return null;
  const r = result as {
    status?: unknown;
    approvalId?: unknown;
    approval?: { decidedBy?: unknown; decisionReason?: unknown };
  };
  if (typeof r.approvalId !== 'string' || r.status === 'awaiting_approval' || r.status === 'applied') return null;
  return {
    status: String(r.status),
    decidedBy: typeof r.approval?.decidedBy === 'string' ? r.approval.decidedBy : null,
    reason: typeof r.approval?.decisionReason === 'string' ? r.approval.decisionReason : null,
    approvalId: r.approvalId,
  };
}
