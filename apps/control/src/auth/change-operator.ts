import { isRolledBackConflict, type Database } from '@sagaflow/engine';
import { recordAuditEvent } from './record-audit-event.ts';
import type { Role } from './roles.ts';
import type { SignedInOperator } from './signed-in-operator.ts';

type Tx = Parameters<Parameters<Database['prisma']['$transaction']>[0]>[0];

/** A new role; disabled or enabled again; or a new password (its argon2id hash, made before the transaction). */
export type OperatorChange = { role: Role } | { disabled: boolean } | { passwordHash: string };

export type ChangeOperatorResult =
  | { ok: true; name: string; role: string; disabled: boolean; sessionsEnded?: number }
  | { ok: false; reason: 'not_found' | 'self' }
  | { ok: false; reason: 'not_admin'; now: { role: string; disabled: boolean } };

/**
 * Changes an operator's role, or disables / re-enables it, with its audit row in the same
 * transaction. Disabling deletes the operator's sessions, so it is signed out at its next request;
 * a role change applies from the next request (roles are read per request). An admin cannot change
 * or disable itself: another admin must, so the last admin cannot lock everyone out by mistake; and the
 * acting admin must still be an enabled admin when the change commits.
 */
export async function changeOperator(
  prisma: Database['prisma'],
  target: string,
  change: OperatorChange,
  by: { operator: SignedInOperator; address: string | null; at: Date },
): Promise<ChangeOperatorResult> {
  // Serializable, and run again when PostgreSQL rolls it back for a conflict (review 31): the role
  // checked when the request was signed in may have been taken away since, by the very admin this
  // one is demoting at the same moment. Each change reads its actor's row and writes the target's,
  // so of two admins demoting each other one is rolled back, and run again it finds its actor no
  // longer an enabled admin and changes nothing: an enabled admin is always left.
  for (let attempt = 1; ; attempt++) {
    try {
      return await prisma.$transaction((tx) => changeIn(tx, target, change, by), { isolationLevel: 'Serializable' });
    } catch (err) {
      if (attempt >= 5 || !isRolledBackConflict(err)) throw err;
    }
  }
}

async function changeIn(
  tx: Tx,
  target: string,
  change: OperatorChange,
  by: { operator: SignedInOperator; address: string | null; at: Date },
): Promise<ChangeOperatorResult> {
  const actor = await tx.operator.findUnique({
    where: { id: by.operator.id },
    select: { role: true, disabled_at: true },
  });
  if (!actor || actor.role !== 'admin' || actor.disabled_at !== null)
    return {
      ok: false,
      reason: 'not_admin',
      now: { role: actor?.role ?? 'removed', disabled: actor === null || actor.disabled_at !== null },
    };
  const row = await tx.operator.findUnique({ where: { name: target } });
  if (!row) return { ok: false, reason: 'not_found' };
  if (row.id === by.operator.id) return { ok: false, reason: 'self' };
  if ('passwordHash' in change) {
    const reset = await resetIn(tx, row.id, change.passwordHash, by.at);
    await recordAuditEvent(tx, {
      at: by.at,
      actorId: by.operator.id,
      actor: by.operator.name,
      action: 'operator_password_reset',
      targetType: 'operator',
      targetId: row.name,
      outcome: 'succeeded',
      address: by.address,
      details: { sessionsEnded: reset.sessionsEnded },
    });
    return { ok: true, name: row.name, role: row.role, disabled: row.disabled_at !== null, ...reset };
  }
  const disabledAt = 'disabled' in change ? (change.disabled ? (row.disabled_at ?? by.at) : null) : row.disabled_at;
  const role = 'role' in change ? change.role : row.role;
  await tx.operator.update({ where: { id: row.id }, data: { role, disabled_at: disabledAt, updated_at: by.at } });
  if (disabledAt !== null) await tx.session.deleteMany({ where: { operator_id: row.id } });
  await recordAuditEvent(tx, {
    at: by.at,
    actorId: by.operator.id,
    actor: by.operator.name,
    action: 'role' in change ? 'operator_role_changed' : change.disabled ? 'operator_disabled' : 'operator_enabled',
    targetType: 'operator',
    targetId: row.name,
    outcome: 'succeeded',
    address: by.address,
    details: 'role' in change ? { from: row.role, to: change.role } : {},
  });
  return { ok: true, name: row.name, role, disabled: disabledAt !== null };
}

/**
 * Sets an operator's password hash and ends every session it has (ADR 0114): whoever held one signs
 * in again with the new password. Its API tokens are credentials of their own and stay (revoke them
 * with `token revoke` when they are suspect too).
 */
export async function resetIn(
  tx: Tx,
  operatorId: string,
  passwordHash: string,
  at: Date,
): Promise<{ sessionsEnded: number }> {
  await tx.operator.update({ where: { id: operatorId }, data: { password_hash: passwordHash, updated_at: at } });
  const ended = await tx.session.deleteMany({ where: { operator_id: operatorId } });
  return { sessionsEnded: ended.count };
}
