import type { Database } from '@sagaflow/engine';
import { recordAuditEvent } from '../record-audit-event.ts';
import { roleAllows } from '../roles.ts';
import { toApiTokenView, type ApiTokenView } from './api-token-view.ts';
import type { TokenActor } from './create-api-token.ts';

export type RevokeApiTokenResult = { ok: true; view: ApiTokenView; alreadyRevoked: boolean } | { ok: false };

/**
 * Revokes a token: the caller's own, or any when the caller is an admin. Another operator's token
 * answers as if it did not exist (which tokens others hold is not told). Revoking twice is not an
 * error; the first revocation's time and revoker stay. Audited in the same transaction.
 */
export async function revokeApiToken(
  prisma: Database['prisma'],
  id: string,
  by: TokenActor,
): Promise<RevokeApiTokenResult> {
  return prisma.$transaction(async (tx) => {
    const row = await tx.apiToken.findUnique({ where: { id }, include: { operator: { select: { name: true } } } });
    if (!row || (row.operator_id !== by.operator.id && !roleAllows(by.operator.role, 'admin'))) return { ok: false };
    if (row.revoked_at !== null) return { ok: true, view: toApiTokenView(row, by.at), alreadyRevoked: true };
    const revoked = await tx.apiToken.update({
      where: { id },
      data: { revoked_at: by.at, revoked_by: by.operator.name },
      include: { operator: { select: { name: true } } },
    });
    await recordAuditEvent(tx, {
      at: by.at,
      actorId: by.operator.id,
      actor: by.operator.name,
      action: 'token_revoked',
      targetType: 'api_token',
      targetId: id,
      outcome: 'succeeded',
      address: by.address,
      details: { name: row.name, operator: row.operator.name, hint: row.hint, via: by.via },
    });
    return { ok: true, view: toApiTokenView(revoked, by.at), alreadyRevoked: false };
  });
}
