import type { Database } from '@sagaflow/engine';
import type { AuthOptions } from '../auth-options.ts';
import { recordAuditEvent, type AuditEventInput, type AuditTransaction } from '../record-audit-event.ts';
import type { ActiveToken, SessionLookup } from '../resolve-session.ts';
import { isRole } from '../roles.ts';
import { apiTokenHash, looksLikeApiToken } from './api-token-secret.ts';

/** What a refused token's caller is told to do next. */
export const createTokenHint =
  'create a token with `npm run sagaflow -- token create --name <name> --sign-in <your-operator-name>` ' +
  '(or ask an admin for one) and set SAGAFLOW_TOKEN to it';

/** How often a token's last use is written (a busy script would otherwise write on every call). */
const touchEveryMs = 60_000;

/**
 * The operator an `Authorization: Bearer` token acts as, with the operator's role as it is now.
 * A refused token (unknown, revoked, expired, its operator disabled) is an audit row
 * (`token_sign_in`, refused) and answers `refused` with what to do. Refused attempts from one
 * address are rate-limited like refused sign-ins (the same window and per-address limit, counted
 * apart): past the limit a token is not even looked up. Requests racing past that first count are
 * counted again before their refusal is told (ADR 0107 addendum): a refusal is recorded and answered
 * as such only while the window has room, under a lock per address, so no address learns more than
 * the limit's worth of answers about tokens per window, however many it sends at once.
 */
export async function resolveBearerToken(
  prisma: Database['prisma'],
  options: AuthOptions,
  token: string,
  address: string | null,
): Promise<Exclude<SessionLookup, { state: 'none' | 'ended' }>> {
  const now = options.now();
  if (address !== null) {
    const limited = await rateLimited(prisma, options, address, now);
    if (limited) {
      await recordRateLimited(prisma, address, now, limited.retryAfterSeconds);
      return limited;
    }
  }

  const row = looksLikeApiToken(token)
    ? await prisma.apiToken.findUnique({ where: { secret_hash: apiTokenHash(token) }, include: { operator: true } })
    : null;
  const refuse = async (reason: string, message: string): Promise<SessionLookup & { state: 'refused' }> => {
    const refusal: AuditEventInput = {
      at: now,
      actorId: row?.operator_id ?? null,
      actor: row?.operator.name ?? 'unknown',
      action: 'token_sign_in',
      targetType: 'api_token',
      ...(row ? { targetId: row.id } : {}),
      outcome: 'refused',
      reason,
      address,
      details: row ? { name: row.name, hint: row.hint } : {},
    };
    if (address === null) {
      await recordAuditEvent(prisma, refusal);
      return { state: 'refused', message, retryAfterSeconds: null };
    }
    // Counted again under the address's lock: the refusal is told only if it still fits the window.
    return prisma.$transaction(async (tx) => {
      await tx.$queryRaw`select pg_advisory_xact_lock(hashtextextended(${`sagaflow.token_sign_in.address:${address}`}, 0))::text`;
      const limited = await rateLimited(tx, options, address, now);
      if (limited) {
        await recordRateLimited(tx, address, now, limited.retryAfterSeconds);
        return limited;
      }
      await recordAuditEvent(tx, refusal);
      return { state: 'refused' as const, message, retryAfterSeconds: null };
    });
  };
  if (!row)
    return refuse(
      looksLikeApiToken(token) ? 'unknown token' : 'not a token',
      `this API token is not known (mistyped, cut short, or not a Sagaflow token: they start with sgf_); ${createTokenHint}`,
    );
  const label = `API token "${row.name}" (${row.hint}…) of ${row.operator.name}`;
  if (row.revoked_at !== null)
    return refuse(
      'revoked',
      `${label} was revoked at ${row.revoked_at.toISOString()} by ${row.revoked_by ?? 'unknown'}; ${createTokenHint}`,
    );
  if (row.expires_at !== null && row.expires_at <= now)
    return refuse('expired', `${label} expired at ${row.expires_at.toISOString()}; ${createTokenHint}`);
  if (row.operator.disabled_at !== null || !isRole(row.operator.role))
    return refuse(
      'operator disabled',
      `the operator of ${label} is disabled; an admin can enable it again (operators.setDisabled)`,
    );
  if (row.last_used_at === null || now.getTime() - row.last_used_at.getTime() >= touchEveryMs)
    await prisma.apiToken.updateMany({ where: { id: row.id }, data: { last_used_at: now } });
  const active: ActiveToken = {
    state: 'active',
    via: 'token',
    token: { id: row.id, name: row.name, hint: row.hint, createdBy: row.created_by },
    operator: {
      id: row.operator.id,
      name: row.operator.name,
      displayName: row.operator.display_name,
      role: row.operator.role,
    },
    expiresAt: row.expires_at,
  };
  return active;
}

type RateLimited = Extract<SessionLookup, { state: 'refused' }> & { retryAfterSeconds: number };

/** The answer for an address whose refused tokens fill the window, or null while it has room. */
async function rateLimited(
  db: Database['prisma'] | AuditTransaction,
  options: AuthOptions,
  address: string,
  now: Date,
): Promise<RateLimited | null> {
  const windowMs = options.signInWindowSeconds * 1000;
  const failures = await db.auditEvent.findMany({
    where: { action: 'token_sign_in', outcome: 'refused', address, at: { gt: new Date(now.getTime() - windowMs) } },
    orderBy: { at: 'asc' },
    select: { at: true },
    take: options.maxFailuresPerAddress,
  });
  const oldest = failures[0];
  if (failures.length < options.maxFailuresPerAddress || !oldest) return null;
  const retryAfterSeconds = Math.max(1, Math.ceil((oldest.at.getTime() + windowMs - now.getTime()) / 1000));
  return {
    state: 'refused',
    message: `too many refused API tokens from this address; try again in ${retryAfterSeconds} s with a valid token`,
    retryAfterSeconds,
  };
}

async function recordRateLimited(
  db: Database['prisma'] | AuditTransaction,
  address: string,
  now: Date,
  retryAfterSeconds: number,
): Promise<void> {
  await recordAuditEvent(db, {
    at: now,
    actorId: null,
    actor: 'unknown',
    action: 'token_sign_in',
    outcome: 'rate_limited',
    address,
    details: { retryAfterSeconds },
  });
}
