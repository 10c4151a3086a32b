import type { Json } from '../../definitions/define-action.ts';
import type { Db } from '../types.ts';

export interface NewRepairCommand {
  id: string;
  at: Date;
  actor: string;
  /** How the actor acted (`token ci-deploy`), or null. */
  via: string | null;
  command: string;
  targetType: string;
  targetId: string;
  expected: Json;
  actual: Json;
  params: Json;
  result: Json;
  reason: string;
  idempotencyKey: string;
  status: 'applied' | 'conflict' | 'refused';
  bulkId: string | null;
  /** The approval a second operator gave (ADR 0020), and who gave it; absent when none was needed. */
  approvalId?: string | null;
  approvedBy?: string | null;
  /** How the approver acted (`token …`), or null. */
  approvedVia?: string | null;
}

/**
 * Writes a repair's audit row. The idempotency key is unique: a second command with the same key
 * fails here (unique violation) and its whole transaction rolls back, so one key has one effect.
 */
export async function insertRepairCommand(db: Db, r: NewRepairCommand): Promise<void> {
  await db.$executeRaw`
    insert into "sagaflow"."repair_commands"
      (id, at, actor, via, command, target_type, target_id, expected, actual, params, result, reason, idempotency_key, status, bulk_id, approval_id, approved_by, approved_via)
    values (${r.id}::uuid, ${r.at}::timestamptz, ${r.actor}, ${r.via}, ${r.command}, ${r.targetType}, ${r.targetId},
            ${JSON.stringify(r.expected)}::jsonb, ${JSON.stringify(r.actual)}::jsonb, ${JSON.stringify(r.params)}::jsonb,
            ${JSON.stringify(r.result)}::jsonb, ${r.reason}, ${r.idempotencyKey}, ${r.status}, ${r.bulkId}::uuid,
            ${r.approvalId ?? null}::uuid, ${r.approvedBy ?? null}, ${r.approvedVia ?? null})`;
}

/** Whether an error is the unique violation of a repair's idempotency key (PostgreSQL 23505). */
export function isDuplicateRepairKey(err: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e: unknown = err; e && typeof e === 'object' && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    const { code, message } = e as { code?: unknown; message?: unknown };
    const text = `${typeof code === 'string' ? code : ''} ${typeof message === 'string' ? message : ''}`;
    if (
      /23505|P2002|unique constraint|duplicate key/i.test(text) &&
      /idempotency_key|repair_commands|P2002|23505/.test(text)
    )
      return true;
  }
  return false;
}
