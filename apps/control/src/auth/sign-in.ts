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
 *
 * The attempt takes its place under the limit before its password is checked (review 31): in one
 * short transaction holding an advisory lock per name and per address, it counts the window's
 * refusals and writes its own row as refused, then checks the password outside it, and the row
 * becomes `succeeded` (with the session) if it matched. Guesses arriving together, or in one batch,
 * are counted one after another, so no more than the limit's passwords are ever checked.
 */
export async function signIn(
  prisma: Database['prisma'],
  options: AuthOptions,
  input: { name: string; password: string; address: string | null },
): Promise<SignInResult> {
  const now = options.now();
  const name = normaliseName(input.name);
  const place = await takePlace(prisma, options, name, input.address, now);
  if (!place.ok) return place;

  const operator = await prisma.operator.findUnique({ where: { name } });
  const usable = operator !== null && operator.disabled_at === null && isRole(operator.role) ? operator : null;
  const matches = await verifyPassword(usable?.password_hash ?? null, input.password);
  if (!usable || !matches || !isRole(usable.role)) {
    await prisma.auditEvent.update({
      where: { id: place.attemptId },
      data: { reason: operator === null ? 'unknown name' : usable === null ? 'operator disabled' : 'wrong password' },
    });
    return { ok: false, reason: 'refused' };
  }

  const token = newSessionToken();
  const expiresAt = new Date(now.getTime() + options.absoluteSeconds * 1000);
  const opened = await prisma
    .$transaction(async (tx) => {
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
      // The session stays only if the hash checked is still the operator's (review 44): a reset or a
      // change that committed since the check, or a disabling, leaves it unopened. The check writes the
      // row (to the same values), so a reset or a change still to come waits for this transaction and,
      // serializable, is rolled back and run again, when it then sees this session and ends it.
      const still = await tx.operator.updateMany({
        where: { id: usable.id, password_hash: usable.password_hash, disabled_at: null },
        data: { password_hash: usable.password_hash },
      });
      if (still.count !== 1) throw new PasswordChangedMeanwhile();
      await tx.auditEvent.update({
        where: { id: place.attemptId },
        data: { actor_id: usable.id, actor: usable.name, target_id: usable.name, outcome: 'succeeded', reason: null },
      });
    })
    .then(
      () => true,
      (err: unknown) => {
        if (err instanceof PasswordChangedMeanwhile) return false;
        throw err;
      },
    );
  if (!opened) {
    // The password was right when checked, and is no longer: refused, as the new one's holder would want.
    await prisma.auditEvent.update({
      where: { id: place.attemptId },
      data: { reason: 'the password changed meanwhile' },
    });
    return { ok: false, reason: 'refused' };
  }
  return {
    ok: true,
    token,
    expiresAt,
    operator: { id: usable.id, name: usable.name, displayName: usable.display_name, role: usable.role },
  };
}

class PasswordChangedMeanwhile extends Error {}

/**
 * The attempt's place under the limit: refused as rate-limited (its row written) when the window is
 * full for its name or its address, or its own row, written as refused until its password matches.
 * A process that dies while checking leaves the row refused: counted, as a guess would be. A password
 * change checks its current password under the same limit (`changePassword`, ADR 0111).
 */
export async function takePlace(
  prisma: Database['prisma'],
  options: AuthOptions,
  name: string,
  address: string | null,
  now: Date,
): Promise<{ ok: true; attemptId: string } | Extract<SignInResult, { reason: 'rate_limited' }>> {
  const since = new Date(now.getTime() - options.signInWindowSeconds * 1000);
  return prisma.$transaction(
    async (tx) => {
      // Names first, then addresses: two attempts never wait for each other in opposite orders.
      await tx.$queryRaw`select pg_advisory_xact_lock(hashtextextended(${`sagaflow.sign_in.name:${name}`}, 0))::text`;
      if (address !== null)
        await tx.$queryRaw`select pg_advisory_xact_lock(hashtextextended(${`sagaflow.sign_in.address:${address}`}, 0))::text`;
      const failures = (where: { target_id: string } | { address: string }, limit: number) =>
        tx.auditEvent.findMany({
          where: { action: 'sign_in', outcome: 'refused', at: { gt: since }, ...where },
          orderBy: { at: 'asc' },
          select: { at: true },
          take: limit,
        });
      const byAccount = await failures({ target_id: name }, options.maxFailuresPerAccount);
      const byAddress = address === null ? [] : await failures({ address }, options.maxFailuresPerAddress);
      const limited = [
        byAccount.length >= options.maxFailuresPerAccount ? byAccount[0] : undefined,
        byAddress.length >= options.maxFailuresPerAddress ? byAddress[0] : undefined,
      ].filter((r) => r !== undefined);
      if (limited.length > 0) {
        // The attempt may be made again once the oldest failure that fills the window has left it.
        const freeAt = Math.max(...limited.map((r) => r.at.getTime() + options.signInWindowSeconds * 1000));
        const retryAfterSeconds = Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000));
        await recordAuditEvent(tx, {
          at: now,
          actorId: null,
          actor: name,
          action: 'sign_in',
          targetType: 'operator',
          targetId: name,
          outcome: 'rate_limited',
          address,
          details: { retryAfterSeconds },
        });
        return { ok: false as const, reason: 'rate_limited' as const, retryAfterSeconds };
      }
      const attempt = await tx.auditEvent.create({
        data: {
          at: now,
          actor_id: null,
          actor: name,
          action: 'sign_in',
          target_type: 'operator',
          target_id: name,
          outcome: 'refused',
          reason: 'the password was being checked',
          address,
          details: {},
        },
        select: { id: true },
      });
      return { ok: true as const, attemptId: attempt.id };
    },
    { maxWait: 10_000, timeout: 10_000 },
  );
}
