import type { Database } from '@sagaflow/engine';
import { recordAuditEvent } from './record-audit-event.ts';
import type { SignedInOperator } from './signed-in-operator.ts';

/** Ends a session (its row is deleted, so the cookie opens nothing even if kept) and audits it. */
export async function signOut(
  prisma: Database['prisma'],
  input: { sessionId: string; operator: SignedInOperator; address: string | null; at: Date },
): Promise<void> {
  await prisma.$transaction(async (tx) => {
    await tx.session.deleteMany({ where: { id: input.sessionId } });
    await recordAuditEvent(tx, {
      at: input.at,
      actorId: input.operator.id,
      actor: input.operator.name,
      action: 'sign_out',
      targetType: 'operator',
      targetId: input.operator.name,
      outcome: 'succeeded',
      address: input.address,
    });
  });
}
