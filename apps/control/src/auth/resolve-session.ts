import type { Database } from '@sagaflow/engine';
import type { AuthOptions } from './auth-options.ts';
import { isRole } from './roles.ts';
import { sessionIdFor } from './session-token.ts';
import type { SignedInOperator } from './signed-in-operator.ts';

export type SessionLookup =
  | { state: 'none' }
  | { state: 'ended' }
  | { state: 'active'; sessionId: string; operator: SignedInOperator; expiresAt: Date; idleExpiresAt: Date };

/**
 * The session a token opens, checked against both expiries on the given clock. A session past
 * either, or whose operator was disabled, is deleted and answers `ended`. An active one is touched
 * (its idle expiry pushed back), at most once per tenth of the idle window to spare the writes.
 */
export async function resolveSession(
  prisma: Database['prisma'],
  options: AuthOptions,
  token: string | null,
): Promise<SessionLookup> {
  if (token === null) return { state: 'none' };
  const id = sessionIdFor(token);
  const row = await prisma.session.findUnique({ where: { id }, include: { operator: true } });
  if (row === null) return { state: 'ended' };
  const now = options.now();
  const idleMs = options.idleSeconds * 1000;
  const { operator } = row;
  if (
    now >= row.expires_at ||
    now.getTime() >= row.last_seen_at.getTime() + idleMs ||
    operator.disabled_at !== null ||
    !isRole(operator.role)
  ) {
    await prisma.session.deleteMany({ where: { id } });
    return { state: 'ended' };
  }
  let lastSeen = row.last_seen_at;
  if (now.getTime() - lastSeen.getTime() >= Math.min(idleMs / 10, 60_000)) {
    await prisma.session.updateMany({ where: { id }, data: { last_seen_at: now } });
    lastSeen = now;
  }
  return {
    state: 'active',
    sessionId: id,
    operator: { id: operator.id, name: operator.name, displayName: operator.display_name, role: operator.role },
    expiresAt: row.expires_at,
    idleExpiresAt: new Date(Math.min(lastSeen.getTime() + idleMs, row.expires_at.getTime())),
  };
}
