import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { sessionCookie } from '../../auth/session-cookie.ts';
import { signIn } from '../../auth/sign-in.ts';
import { signOut } from '../../auth/sign-out.ts';
import { storableText } from '../storable-text.ts';
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
});
