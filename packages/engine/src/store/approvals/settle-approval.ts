import type { Json } from '../../definitions/define-action.ts';
import type { Db } from '../types.ts';
import { statusIs } from '../keyed-status.ts';

export type ApprovalStatus = 'pending' | 'applying' | 'applied' | 'conflict' | 'refused' | 'rejected' | 'expired';

/**
 * Records an approval's decision, compare-and-swap on the status it must still have (`from`): a
 * decision taken by someone else first leaves 0 rows changed, and the caller decides nothing.
 * Returns whether this call made the change.
 */
export async function settleApproval(
  db: Db,
  args: {
    id: string;
    from: ApprovalStatus;
    to: ApprovalStatus;
    by: string | null;
    at: Date;
    reason?: string | null;
    result?: Json | null;
    /** How the approver acted (an API token, as repair_commands.approved_via names it); kept once set. */
    via?: string | null;
    /** A bulk's one bulk id, fixed by its claim; kept once set (ADR 0121). */
    bulkId?: string | null;
    /** Only while the approval has not expired at this time. */
    unexpiredAt?: Date;
  },
): Promise<boolean> {
  const result = args.result === undefined || args.result === null ? null : JSON.stringify(args.result);
  const changed = await db.$executeRaw`
    update "sagaflow"."repair_approvals"
       set status = ${args.to}, decided_by = coalesce(${args.by}, decided_by),
           decided_at = coalesce(decided_at, ${args.at}::timestamptz),
           decision_reason = coalesce(${args.reason ?? null}, decision_reason),
           result = coalesce(${result}::jsonb, result),
           decided_via = coalesce(${args.via ?? null}, decided_via),
           bulk_id = coalesce(${args.bulkId ?? null}::uuid, bulk_id)
     where id = ${args.id}::uuid and ${statusIs('status', args.from)}
       and (${args.unexpiredAt ?? null}::timestamptz is null or expires_at > ${args.unexpiredAt ?? null}::timestamptz)`;
  return changed === 1;
}
