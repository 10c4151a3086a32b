import type { Json } from '../../definitions/define-action.ts';
import type { Db } from '../types.ts';

export interface NewApproval {
  id: string;
  createdAt: Date;
  expiresAt: Date;
  drafter: string;
  command: string;
  targetType: string;
  targetId: string;
  bulk: boolean;
  payload: Json;
  preview: Json;
  reason: string;
  idempotencyKey: string;
}

/**
 * Stores a gated repair command as a pending approval. The idempotency key is unique: a second draft
 * with the same key fails here (unique violation), and its caller returns the first draft instead.
 */
export async function insertApproval(db: Db, a: NewApproval): Promise<void> {
  await db.$executeRaw`
    insert into "sagaflow"."repair_approvals"
      (id, created_at, expires_at, drafter, command, target_type, target_id, bulk, payload, preview, reason, idempotency_key, status)
    values (${a.id}::uuid, ${a.createdAt}::timestamptz, ${a.expiresAt}::timestamptz, ${a.drafter}, ${a.command},
            ${a.targetType}, ${a.targetId}, ${a.bulk}, ${JSON.stringify(a.payload)}::jsonb,
            ${JSON.stringify(a.preview)}::jsonb, ${a.reason}, ${a.idempotencyKey}, 'pending')`;
}

/** Whether an error is the unique violation of an approval's idempotency key (PostgreSQL 23505). */
export function isDuplicateApprovalKey(err: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e: unknown = err; e && typeof e === 'object' && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    const { code, message } = e as { code?: unknown; message?: unknown };
    const text = `${typeof code === 'string' ? code : ''} ${typeof message === 'string' ? message : ''}`;
    if (/23505|P2002|unique constraint|duplicate key/i.test(text)) return true;
  }
  return false;
}
