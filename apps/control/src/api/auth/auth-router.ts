import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { changePassword } from '../../auth/change-password.ts';
import { sessionCookie } from '../../auth/session-cookie.ts';
import { signIn } from '../../auth/sign-in.ts';
import { signOut } from '../../auth/sign-out.ts';
import { newPasswordInput } from '../operators/operator-name-input.ts';
import { storableText } from '../storable-text.ts';
import { tokenVia } from '../token-via.ts';
import { publicProcedure, router, viewerProcedure } from '../trpc.ts';

/** The same answer for an unknown name and a wrong password: which names exist is not told. */
const refusedMessage = 'wrong name or password';

export const authRouter = router({
  /** Opens a session and sets its cookie; refused sign-ins are audited and rate-limited. */
  signIn: publicProcedure
    .input(z.object({ name: storableText(200).min(1), password: storableText(1000).min(1) }).strict())
    .mutation(async ({ ctx, input }) => {
      const result = await signIn(ctx.db.prisma, ctx.auth, { ...input, address: ctx.address });
      if (!result.ok) {
        if (result.reason === 'rate_limited') {
          ctx.setHeader('retry-after', String(result.retryAfterSeconds));
          throw new TRPCError({
            code: 'TOO_MANY_REQUESTS',
            message: `too many sign-in attempts; try again in ${result.retryAfterSeconds} s`,
          });
        }
        throw new TRPCError({ code: 'UNAUTHORIZED', message: refusedMessage });
      }
      ctx.setHeader('set-cookie', sessionCookie(result.token, ctx.auth.absoluteSeconds, ctx.auth.cookieSecure));
      return { operator: result.operator, expiresAt: result.expiresAt.toISOString() };
    }),
  /** Ends this session and clears its cookie. */
  signOut: viewerProcedure.input(z.object({}).strict().optional()).mutation(async ({ ctx }) => {
    if (ctx.session.via === 'token')
      throw new TRPCError({
        code: 'BAD_REQUEST',
        message: 'an API token has no session to end; revoke the token instead (tokens.revoke)',
      });
    await signOut(ctx.db.prisma, {
      sessionId: ctx.session.sessionId,
      operator: ctx.session.operator,
      address: ctx.address,
      at: ctx.auth.now(),
    });
    ctx.setHeader('set-cookie', sessionCookie('', 0, ctx.auth.cookieSecure));
    return { signedOut: true };
  }),
  /**
   * Who this session (or API token) belongs to and when it ends (the console shows it and hides what
   * the role cannot do). A token has no idle expiry, and no expiry at all unless it was given one.
   */
  me: viewerProcedure.input(z.object({}).strict().optional()).query(({ ctx }) => {
    const { session } = ctx;
    if (session.via === 'token')
      return {
        operator: session.operator,
        expiresAt: session.expiresAt?.toISOString() ?? null,
        idleExpiresAt: null,
        token: { id: session.token.id, name: session.token.name, hint: session.token.hint },
      };
    return {
      operator: session.operator,
      expiresAt: session.expiresAt.toISOString(),
      idleExpiresAt: session.idleExpiresAt.toISOString(),
      token: null,
    };
  }),
  /**
   * The signed-in operator changes its own password (ADR 0111): the current one is required and
   * checked under the sign-in limit, the new one follows operators.create's rule. Its other sessions
   * end; the one it asks from stays open. A wrong current password is a 403 (not a 401: the session
   * is still good).
   */
  changePassword: viewerProcedure
    .input(
      z
        .object({ currentPassword: storableText(1000).min(1), newPassword: newPasswordInput })
        .strict()
        .refine((i) => i.newPassword !== i.currentPassword, {
          path: ['newPassword'],
          message: 'the new password is the current one; choose another',
        }),
    )
    .mutation(async ({ ctx, input }) => {
      const { session } = ctx;
      const result = await changePassword(ctx.db.prisma, ctx.auth, {
        operator: session.operator,
        currentPassword: input.currentPassword,
        newPassword: input.newPassword,
        keepSessionId: session.via === 'session' ? session.sessionId : null,
        via: session.via === 'token' ? tokenVia(session.token) : null,
        address: ctx.address,
      });
      if (result.ok) return { changed: true, otherSessionsEnded: result.sessionsEnded };
      if (result.reason === 'rate_limited') {
        ctx.setHeader('retry-after', String(result.retryAfterSeconds));
        throw new TRPCError({
          code: 'TOO_MANY_REQUESTS',
          message: `too many wrong passwords; try again in ${result.retryAfterSeconds} s`,
        });
      }
      if (result.reason === 'changed_meanwhile')
        throw new TRPCError({
          code: 'CONFLICT',
          message: 'the password was changed by another request meanwhile; nothing changed here',
        });
      throw new TRPCError({ code: 'FORBIDDEN', message: 'the current password is wrong; nothing changed' });
    }),
});
