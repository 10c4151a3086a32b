import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { normaliseName } from '../../auth/sign-in.ts';
import { roleAllows } from '../../auth/roles.ts';
import { toApiTokenView } from '../../auth/tokens/api-token-view.ts';
import { createApiToken, type TokenActor } from '../../auth/tokens/create-api-token.ts';
import { revokeApiToken } from '../../auth/tokens/revoke-api-token.ts';
import { tokenVia } from '../token-via.ts';
import { operatorNameInput } from '../operators/operator-name-input.ts';
import { storableText } from '../storable-text.ts';
import { router, type SignedInContext, viewerProcedure } from '../trpc.ts';

const operatorName = operatorNameInput;

const maxDays = 3650;

function actor(ctx: SignedInContext): TokenActor {
  const { session } = ctx;
  return {
    operator: session.operator,
    via: session.via === 'token' ? tokenVia(session.token) : null,
    address: ctx.address,
    at: ctx.auth.now(),
  };
}

/** An operator manages its own tokens; an admin anyone's. */
function mayManage(ctx: SignedInContext, target: string): void {
  const { operator } = ctx.session;
  if (target !== operator.name && !roleAllows(operator.role, 'admin'))
    throw new TRPCError({
      code: 'FORBIDDEN',
      message: `only an admin manages another operator's tokens; ${operator.name} is ${operator.role}`,
    });
}

/**
 * Operator API tokens (ADR 0021): the CLI's credential. A token acts as its operator with the
 * operator's role at each request. Any signed-in operator manages its own; an admin anyone's.
 * Creation and revocation are audit rows; the secret is returned once, by `create`, and never stored.
 */
export const tokensRouter = router({
  create: viewerProcedure
    .input(
      z
        .object({
          name: storableText(100).trim().min(1),
          /** Whose token it is; the caller's own by default (another's: admins only). */
          operator: operatorName.optional(),
          /** Without it the token lasts until it is revoked (or its operator disabled). */
          expiresInDays: z.number().int().min(1).max(maxDays).optional(),
        })
        .strict(),
    )
    .mutation(async ({ ctx, input }) => {
      const by = actor(ctx);
      const target = input.operator === undefined ? by.operator.name : normaliseName(input.operator);
      mayManage(ctx, target);
      const expiresAt =
        input.expiresInDays === undefined ? null : new Date(by.at.getTime() + input.expiresInDays * 86_400_000);
      const result = await createApiToken(ctx.db.prisma, { operatorName: target, name: input.name, expiresAt }, by);
      if (!result.ok)
        throw result.reason === 'not_found'
          ? new TRPCError({ code: 'NOT_FOUND', message: `no operator named ${target}` })
          : new TRPCError({ code: 'CONFLICT', message: `${target} is disabled; enable it before giving it a token` });
      return { ...result.view, token: result.token };
    }),
  /** Tokens without their secrets: the caller's own, another operator's (admins), or everyone's (`all`, admins). */
  list: viewerProcedure
    .input(
      z
        .object({
          operator: operatorName.optional(),
          all: z.boolean().optional(),
          includeRevoked: z.boolean().optional(),
        })
        .strict()
        .optional(),
    )
    .query(async ({ ctx, input }) => {
      const self = ctx.session.operator;
      const target = input?.operator === undefined ? self.name : normaliseName(input.operator);
      if (input?.all) mayManage(ctx, '');
      else mayManage(ctx, target);
      const now = ctx.auth.now();
      const rows = await ctx.db.prisma.apiToken.findMany({
        where: {
          ...(input?.all ? {} : { operator: { name: target } }),
          ...(input?.includeRevoked ? {} : { revoked_at: null }),
        },
        include: { operator: { select: { name: true } } },
        orderBy: [{ created_at: 'desc' }, { id: 'asc' }],
        take: 1000,
      });
      return rows.map((r) => toApiTokenView(r, now));
    }),
  /** Revokes a token at once (its next request is a 401); revoking it again changes nothing. */
  revoke: viewerProcedure.input(z.object({ id: z.uuid() }).strict()).mutation(async ({ ctx, input }) => {
    const result = await revokeApiToken(ctx.db.prisma, input.id, actor(ctx));
    if (!result.ok)
      throw new TRPCError({
        code: 'NOT_FOUND',
        message: `no token ${input.id} among the tokens you may revoke; list them with tokens.list`,
      });
    return { ...result.view, alreadyRevoked: result.alreadyRevoked };
  }),
});
