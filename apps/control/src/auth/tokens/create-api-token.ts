import type { Database } from '@sagaflow/engine';
import { recordAuditEvent } from '../record-audit-event.ts';
import type { SignedInOperator } from '../signed-in-operator.ts';
import { newApiToken } from './api-token-secret.ts';
import { toApiTokenView, type ApiTokenView } from './api-token-view.ts';

export interface TokenActor {
  operator: SignedInOperator;
  /** The token the caller used, when it used one (`token <name>`), for the audit row. */
  via: string | null;
  address: string | null;
  at: Date;
}

export type CreateApiTokenResult =
  { ok: true; token: string; view: ApiTokenView } | { ok: false; reason: 'not_found' | 'disabled' };

/**
 * Creates an API token for an operator (the caller itself, or any operator when an admin asks: the
 * caller checks that), with its audit row in the same transaction. Returns the secret once; only
 * its hash is stored.
 */
export async function createApiToken(
  prisma: Database['prisma'],
  input: { operatorName: string; name: string; expiresAt: Date | null },
  by: TokenActor,
): Promise<CreateApiTokenResult> {
  const secret = newApiToken();
  return prisma.$transaction(async (tx) => {
    const operator = await tx.operator.findUnique({ where: { name: input.operatorName } });
    if (!operator) return { ok: false, reason: 'not_found' };
    if (operator.disabled_at !== null) return { ok: false, reason: 'disabled' };
    const row = await tx.apiToken.create({
      data: {
        operator_id: operator.id,
        name: input.name,
        secret_hash: secret.secretHash,
        hint: secret.hint,
        created_at: by.at,
        created_by: by.operator.name,
        expires_at: input.expiresAt,
      },
      include: { operator: { select: { name: true } } },
    });
    await recordAuditEvent(tx, {
      at: by.at,
      actorId: by.operator.id,
      actor: by.operator.name,
      action: 'token_created',
      targetType: 'api_token',
      targetId: row.id,
      outcome: 'succeeded',
      address: by.address,
      details: {
        name: row.name,
        operator: operator.name,
        hint: row.hint,
        expiresAt: row.expires_at?.toISOString() ?? null,
        via: by.via,
      },
    });
    return { ok: true, token: secret.token, view: toApiTokenView(row, by.at) };
  });
}
