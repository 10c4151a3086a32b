import { isRolledBackConflict, type Database } from '@sagaflow/engine';
import { recordAuditEvent } from './record-audit-event.ts';
import type { Role } from './roles.ts';
import type { SignedInOperator } from './signed-in-operator.ts';

type Tx = Parameters<Parameters<Database['prisma']['$transaction']>[0]>[0];

const changeLockKey = (operatorId: string) => `sagaflow.operator_change:${operatorId}`;

/** A new role; disabled or enabled again; or a new password (its argon2id hash, made before the transaction). */
export type OperatorChange = { role: Role } | { disabled: boolean } | { passwordHash: string };

export type ChangeOperatorResult =
  | { ok: true; name: string; role: string; disabled: boolean; sessionsEnded?: number }
  | { ok: false; reason: 'not_found' | 'self' | 'session_ended' | 'token_ended' }
  | { ok: false; reason: 'not_admin'; now: { role: string; disabled: boolean } };

/**
 * Who makes a change: the operator, and the credential its request came with (a session's id, or an
 * API token's id), which must still be valid when the change commits. `details` are added to the
 * change's audit row (`via` and `tokenCreatedBy` for a token, ADR 0111).
 */
export interface ChangeBy {
  operator: SignedInOperator;
  address: string | null;
  at: Date;
  credential: { sessionId: string } | { tokenId: string };
  details?: Record<string, string | number | boolean | null>;
}

/**
 * Changes an operator's role, or disables / re-enables it, with its audit row in the same
 * transaction. Disabling deletes the operator's sessions, so it is signed out at its next request;
 * a role change applies from the next request (roles are read per request). An admin cannot change
 * or disable itself: another admin must, so the last admin cannot lock everyone out by mistake; and the
 * acting admin must still be an enabled admin when the change commits, and the session (or token) its
 * request came with must still be open (review 44).
 */
export async function changeOperator(
  prisma: Database['prisma'],
  target: string,
  change: OperatorChange,
  by: ChangeBy,
): Promise<ChangeOperatorResult> {
  // The role checked when the request was signed in may have been taken away since, by the very
  // admin this one is demoting at the same moment (review 31), or by a third admin whose change
  // committed while this one waited (review 44). So each change holds its target's "change" lock
  // (exclusive) and its actor's (shared): advisory locks, one per operator, held to the commit. The
  // actor, and the credential the request came with, are read again once both are held, in read
  // committed: what they are then stays so until this change commits, since whatever would change
  // them (a role change, a disabling, a reset; `changePassword` takes the lock too) waits for it. Of
  // two admins changing each other at once, each waits for the other's lock: PostgreSQL rolls one
  // back (40P01), and run again it finds its actor demoted, or its session ended, and changes
  // nothing. The actor's row itself is not locked: a sign-in (which writes its row) or anything else
  // holding it does not hold up the actor's changes.
  for (let attempt = 1; ; attempt++) {
    try {
      return await prisma.$transaction((tx) => changeIn(tx, target, change, by), { isolationLevel: 'ReadCommitted' });
    } catch (err) {
      if (attempt >= 5 || !isRolledBackConflict(err)) throw err;
    }
  }
}

async function changeIn(tx: Tx, target: string, change: OperatorChange, by: ChangeBy): Promise<ChangeOperatorResult> {
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
  // The target's row, its lock, the actor's lock, then the actor and its credential read again.
  const [row] = await tx.$queryRaw<{ id: string; name: string; role: string; disabled_at: Date | null }[]>`
    select id::text as id, name, role, disabled_at from "sagaflow"."operators" where name = ${target} for no key update`;
  if (!row) return { ok: false, reason: 'not_found' };
  if (row.id === by.operator.id) return { ok: false, reason: 'self' };
  await lockOperatorForChange(tx, row.id);
  await tx.$queryRaw`select pg_advisory_xact_lock_shared(hashtextextended(${changeLockKey(by.operator.id)}, 0))::text`;
  const [held] = await tx.$queryRaw<{ role: string; disabled_at: Date | null }[]>`
    select role, disabled_at from "sagaflow"."operators" where id = ${by.operator.id}::uuid`;
  if (!held || held.role !== 'admin' || held.disabled_at !== null)
    return {
      ok: false,
      reason: 'not_admin',
      now: { role: held?.role ?? 'removed', disabled: held === undefined || held.disabled_at !== null },
    };
  if ('sessionId' in by.credential) {
    // A reset of the actor ends its sessions: a change made with one that is gone does not commit.
    const open = await tx.$queryRaw<unknown[]>`
      select 1 from "sagaflow"."sessions" where id = ${by.credential.sessionId} for share`;
    if (open.length === 0) return { ok: false, reason: 'session_ended' };
  } else {
    // A token survives a reset of its operator (ADR 0114); a revocation or an expiry does not.
    const [token] = await tx.$queryRaw<{ live: boolean }[]>`
      select (revoked_at is null and (expires_at is null or expires_at > ${by.at})) as live
        from "sagaflow"."api_tokens" where id = ${by.credential.tokenId}::uuid for share`;
    if (!token?.live) return { ok: false, reason: 'token_ended' };
  }
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
      details: { ...by.details, sessionsEnded: reset.sessionsEnded },
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
    details: { ...by.details, ...('role' in change ? { from: row.role, to: change.role } : {}) },
  });
  return { ok: true, name: row.name, role, disabled: disabledAt !== null };
}

/**
 * Takes an operator's change lock, exclusively, to the end of the transaction: a change of its role,
 * its disabling, or a new password (reset or its own change) takes it; a change the operator makes
 * takes it shared (review 44). Take it after the operator's row.
 */
export async function lockOperatorForChange(tx: Tx, operatorId: string): Promise<void> {
  await tx.$queryRaw`select pg_advisory_xact_lock(hashtextextended(${changeLockKey(operatorId)}, 0))::text`;
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
  await lockOperatorForChange(tx, operatorId);
  const ended = await tx.session.deleteMany({ where: { operator_id: operatorId } });
  return { sessionsEnded: ended.count };
}
