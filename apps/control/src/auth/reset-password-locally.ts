import type { Database } from '@sagaflow/engine';
import { resetIn } from './change-operator.ts';
import { hashPassword } from './password.ts';
import { recordAuditEvent } from './record-audit-event.ts';

/**
 * The break-glass reset (ADR 0114): `sagaflow reset-password <name> --local`, run by whoever can open
 * the database itself, sets an operator's password with no signed-in admin. The hash, the ended
 * sessions and the `operator_password_reset` trail row (actor `local:<os user>`, no operator id)
 * commit together. Null when no operator has that name.
 */
export async function resetPasswordLocally(
  prisma: Database['prisma'],
  name: string,
  password: string,
  actor: string,
): Promise<{ name: string; role: string; disabled: boolean; sessionsEnded: number } | null> {
  const hash = await hashPassword(password);
  return prisma.$transaction(async (tx) => {
    const row = await tx.operator.findUnique({ where: { name } });
    if (!row) return null;
    const at = new Date();
    const { sessionsEnded } = await resetIn(tx, row.id, hash, at);
    await recordAuditEvent(tx, {
      at,
      actorId: null,
      actor,
      action: 'operator_password_reset',
      targetType: 'operator',
      targetId: row.name,
      outcome: 'succeeded',
      address: null,
      details: { sessionsEnded, via: 'local' },
    });
    return { name: row.name, role: row.role, disabled: row.disabled_at !== null, sessionsEnded };
  });
}
