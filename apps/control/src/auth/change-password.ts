import type { Database } from '@sagaflow/engine';
import type { AuthOptions } from './auth-options.ts';
import { lockOperatorForChange } from './change-operator.ts';
import { hashPassword, verifyPassword } from './password.ts';
import { normaliseName, takePlace } from './sign-in.ts';
import type { SignedInOperator } from './signed-in-operator.ts';

export type ChangePasswordResult =
  | { ok: true; sessionsEnded: number }
  | { ok: false; reason: 'wrong_password' | 'changed_meanwhile' }
  | { ok: false; reason: 'rate_limited'; retryAfterSeconds: number };

/**
 * A signed-in operator changes its own password (ADR 0111). The current password is checked as a
 * sign-in's is, under the same limit and with the same row: the attempt takes its place in the
 * window first (a wrong current password stays a refused `sign_in` row, reason `wrong current
 * password`, counted against the name and the address like any guess), so a stolen session cannot
 * guess the password faster than the sign-in page could. A match sets the new argon2id hash, ends
 * the operator's other sessions (`keepSessionId`, the caller's own, stays open; a token caller has
 * none, so all end) and turns the attempt's row into the `password_changed` row, in one
 * transaction. The hash is replaced only if it is still the one checked: of two changes at once,
 * one wins and the other is told. API tokens are credentials of their own and are not revoked.
 */
export async function changePassword(
  prisma: Database['prisma'],
  options: AuthOptions,
  input: {
    operator: SignedInOperator;
    currentPassword: string;
    newPassword: string;
    keepSessionId: string | null;
    via: string | null;
    address: string | null;
  },
): Promise<ChangePasswordResult> {
  const now = options.now();
  const name = normaliseName(input.operator.name);
  const place = await takePlace(prisma, options, name, input.address, now);
  if (!place.ok) return place;
  const row = await prisma.operator.findUnique({ where: { id: input.operator.id } });
  const checked = row?.password_hash ?? null;
  if (!row || checked === null || !(await verifyPassword(checked, input.currentPassword))) {
    await prisma.auditEvent.update({
      where: { id: place.attemptId },
      data: { reason: 'wrong current password', details: { during: 'password_change' } },
    });
    return { ok: false, reason: 'wrong_password' };
  }
  const newHash = await hashPassword(input.newPassword);
  return prisma.$transaction(async (tx) => {
    const changed = await tx.operator.updateMany({
      where: { id: row.id, password_hash: checked, disabled_at: null },
      data: { password_hash: newHash },
    });
    // A change this operator is making with one of the sessions ended here finishes first, or not at all.
    if (changed.count === 1) await lockOperatorForChange(tx, row.id);
    const ended =
      changed.count === 1
        ? await tx.session.deleteMany({
            where: {
              operator_id: row.id,
              ...(input.keepSessionId === null ? {} : { id: { not: input.keepSessionId } }),
            },
          })
        : { count: 0 };
    await tx.auditEvent.update({
      where: { id: place.attemptId },
      data:
        changed.count === 1
          ? {
              action: 'password_changed',
              actor_id: row.id,
              actor: row.name,
              outcome: 'succeeded',
              reason: null,
              details: { sessionsEnded: ended.count, via: input.via },
            }
          : // The password was right when checked: not a guess, so not counted as one.
            {
              action: 'password_changed',
              actor_id: row.id,
              actor: row.name,
              outcome: 'refused',
              reason: 'the password changed meanwhile',
            },
    });
    return changed.count === 1
      ? { ok: true as const, sessionsEnded: ended.count }
      : { ok: false as const, reason: 'changed_meanwhile' as const };
  });
}
