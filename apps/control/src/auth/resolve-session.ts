import type { Database } from '@sagaflow/engine';
import type { AuthOptions } from './auth-options.ts';
import { isRole } from './roles.ts';
import { sessionIdFor } from './session-token.ts';
import type { SignedInOperator } from './signed-in-operator.ts';

/** A request signed in by its session cookie. */
export interface ActiveSession {
  state: 'active';
  via: 'session';
  sessionId: string;
  operator: SignedInOperator;
  expiresAt: Date;
  idleExpiresAt: Date;
}

/** A request signed in by an API token (`Authorization: Bearer`, ADR 0021). */
export interface ActiveToken {
  state: 'active';
  via: 'token';
  /** `createdBy`: who created it (the operator itself, or an admin for it): the person who held its secret. */
  token: { id: string; name: string; hint: string; createdBy: string };
  operator: SignedInOperator;
  expiresAt: Date | null;
}

/**
 * Who a request is: nobody (`none`), a cookie whose session ended (`ended`), a bearer token refused
 * (`refused`, with the message that says what to do; `retryAfterSeconds` when rate-limited), or an
 * operator signed in by session or token.
 */
export type SessionLookup =
  | { state: 'none' }
  | { state: 'ended' }
  | { state: 'refused'; message: string; retryAfterSeconds: number | null }
  | ActiveSession
  | ActiveToken;

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
    via: 'session',
    sessionId: id,
    operator: { id: operator.id, name: operator.name, displayName: operator.display_name, role: operator.role },
    expiresAt: row.expires_at,
    idleExpiresAt: new Date(Math.min(lastSeen.getTime() + idleMs, row.expires_at.getTime())),
  };
}
