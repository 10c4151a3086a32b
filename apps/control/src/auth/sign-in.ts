import type { Database } from '@sagaflow/engine';
import type { AuthOptions } from './auth-options.ts';
import { verifyPassword } from './password.ts';
import { recordAuditEvent } from './record-audit-event.ts';
import { isRole } from './roles.ts';
import { newSessionToken, sessionIdFor } from './session-token.ts';
import type { SignedInOperator } from './signed-in-operator.ts';

export type SignInResult =
  | { ok: true; token: string; operator: SignedInOperator; expiresAt: Date }
  | { ok: false; reason: 'refused' }
  | { ok: false; reason: 'rate_limited'; retryAfterSeconds: number };

/** Sign-in names are compared without case or surrounding blanks. */
export const normaliseName = (name: string) => name.trim().toLowerCase();

/**
 * Checks a name and password and opens a session. Refused sign-ins are audit rows, and the rate
 * limit counts them (per name, known or not, and per address) over a sliding window, so it holds
 * across restarts and replicas. A wrong password and an unknown name get the same answer in the
 * same time; a limited attempt checks no password at all.
 */
export async function signIn(
  prisma: Database['prisma'],
  options: AuthOptions,
  input: { name: string; password: string; address: string | null },
): Promise<SignInResult> {
  const now = options.now();
  const name = normaliseName(input.name);
  const since = new Date(now.getTime() - options.signInWindowSeconds * 1000);
  const failures = (where: { target_id: string } | { address: string }, limit: number) =>
    prisma.auditEvent.findMany({
      where: { action: 'sign_in', outcome: 'refused', at: { gt: since }, ...where },
      orderBy: { at: 'asc' },
      select: { at: true },
      take: limit,
    });
  const byAccount = await failures({ target_id: name }, options.maxFailuresPerAccount);
  const byAddress =
    input.address === null ? [] : await failures({ address: input.address }, options.maxFailuresPerAddress);
  const limited = [
    byAccount.length >= options.maxFailuresPerAccount ? byAccount[0] : undefined,
    byAddress.length >= options.maxFailuresPerAddress ? byAddress[0] : undefined,
  ].filter((r) => r !== undefined);
  if (limited.length > 0) {
    // The attempt may be made again once the oldest failure that fills the window has left it.
    const freeAt = Math.max(...limited.map((r) => r.at.getTime() + options.signInWindowSeconds * 1000));
    const retryAfterSeconds = Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000));
    await recordAuditEvent(prisma, {
      at: now,
      actorId: null,
      actor: name,
      action: 'sign_in',
      targetType: 'operator',
      targetId: name,
      outcome: 'rate_limited',
      address: input.address,
      details: { retryAfterSeconds },
    });
    return { ok: false, reason: 'rate_limited', retryAfterSeconds };
  }

  const operator = await prisma.operator.findUnique({ where: { name } });
  const usable = operator !== null && operator.disabled_at === null && isRole(operator.role) ? operator : null;
  const matches = await verifyPassword(usable?.password_hash ?? null, input.password);
  if (!usable || !matches || !isRole(usable.role)) {
    await recordAuditEvent(prisma, {
      at: now,
      actorId: null,
      actor: name,
      action: 'sign_in',
      targetType: 'operator',
      targetId: name,
      outcome: 'refused',
      reason: operator === null ? 'unknown name' : usable === null ? 'operator disabled' : 'wrong password',
      address: input.address,
    });
    return { ok: false, reason: 'refused' };
  }

  const token = newSessionToken();
  const expiresAt = new Date(now.getTime() + options.absoluteSeconds * 1000);
  await prisma.$transaction(async (tx) => {
    await tx.session.deleteMany({ where: { operator_id: usable.id, expires_at: { lte: now } } });
    await tx.session.create({
      data: {
        id: sessionIdFor(token),
        operator_id: usable.id,
        created_at: now,
        last_seen_at: now,
        expires_at: expiresAt,
        address: input.address,
      },
    });
    await recordAuditEvent(tx, {
      at: now,
      actorId: usable.id,
      actor: usable.name,
      action: 'sign_in',
      targetType: 'operator',
      targetId: usable.name,
      outcome: 'succeeded',
      address: input.address,
    });
  });
  return {
    ok: true,
    token,
    expiresAt,
    operator: { id: usable.id, name: usable.name, displayName: usable.display_name, role: usable.role },
  };
}
