import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { createOperator } from '../../auth/create-operator.ts';
import { changeOperator, type OperatorChange } from '../../auth/change-operator.ts';
import { hashPassword } from '../../auth/password.ts';
import { roles } from '../../auth/roles.ts';
import { normaliseName } from '../../auth/sign-in.ts';
import { storableText } from '../storable-text.ts';
import { tokenVia } from '../token-via.ts';
import { newPasswordInput, operatorNameInput } from './operator-name-input.ts';
import { adminProcedure, router, type SignedInContext } from '../trpc.ts';

type AdminContext = SignedInContext;

const name = operatorNameInput;

/** Operator accounts and their roles: admins only, every change in the audit trail. */
export const operatorsRouter = router({
  list: adminProcedure.input(z.object({}).strict().optional()).query(async ({ ctx }) =>
    (
      await ctx.db.prisma.operator.findMany({
        orderBy: { name: 'asc' },
        select: { id: true, name: true, display_name: true, role: true, created_at: true, disabled_at: true },
      })
    ).map((o) => ({
      id: o.id,
      name: o.name,
      displayName: o.display_name,
      role: o.role,
      createdAt: o.created_at.toISOString(),
      disabled: o.disabled_at !== null,
    })),
  ),
  create: adminProcedure
    .input(
      z
        .object({
          name,
          displayName: storableText(200).trim().min(1),
          role: z.enum(roles),
          password: newPasswordInput,
        })
        .strict(),
    )
    .mutation(async ({ ctx, input }) => {
      const by = ctx.session.operator;
      const taken = () =>
        new TRPCError({ code: 'CONFLICT', message: `an operator named ${normaliseName(input.name)} exists` });
      const id = await createOperator(ctx.db.prisma, input, {
        id: by.id,
        name: by.name,
        address: ctx.address,
        at: ctx.auth.now(),
      }).catch((err: unknown) => {
        // Two admins creating one name at once: the unique index decides, the loser hears why.
        throw (err as { code?: string }).code === 'P2002' ? taken() : err;
      });
      return { id };
    }),
  /** Changes a role; it applies from the operator's next request (roles are read per request). */
  setRole: adminProcedure
    .input(z.object({ name, role: z.enum(roles) }).strict())
    .mutation(({ ctx, input }) => change(ctx, input.name, { role: input.role })),
  /** Disables an operator (its sessions end at once) or enables it again. */
  setDisabled: adminProcedure
    .input(z.object({ name, disabled: z.boolean() }).strict())
    .mutation(({ ctx, input }) => change(ctx, input.name, { disabled: input.disabled })),
  /**
   * Sets another operator's password (ADR 0114): every session of theirs ends; their API tokens stay.
   * An admin's own password is changed with `auth.changePassword`, which asks for the current one: a
   * session left open somewhere cannot take over its admin's password.
   */
  resetPassword: adminProcedure
    .input(z.object({ name, newPassword: newPasswordInput }).strict())
    .mutation(async ({ ctx, input }) => {
      const target = normaliseName(input.name);
      if (target === ctx.session.operator.name)
        throw new TRPCError({
          code: 'BAD_REQUEST',
          message:
            'input.name: that is you; change your own password with auth.changePassword (your current password is asked for)',
        });
      const changed = await change(ctx, input.name, { passwordHash: await hashPassword(input.newPassword) });
      return { ...changed, sessionsEnded: changed.sessionsEnded ?? 0 };
    }),
});

async function change(ctx: AdminContext, rawName: string, what: OperatorChange) {
  const target = normaliseName(rawName);
  const { session } = ctx;
  const result = await changeOperator(ctx.db.prisma, target, what, {
    operator: session.operator,
    address: ctx.address,
    at: ctx.auth.now(),
    // The change commits only while the credential it came with is still open (review 44); a token's
    // row names it and who created it, who held its secret (ADR 0111).
    ...(session.via === 'token'
      ? {
          credential: { tokenId: session.token.id },
          details: { via: tokenVia(session.token), tokenCreatedBy: session.token.createdBy },
        }
      : { credential: { sessionId: session.sessionId } }),
  });
  if (result.ok)
    return {
      name: result.name,
      role: result.role,
      disabled: result.disabled,
      ...(result.sessionsEnded === undefined ? {} : { sessionsEnded: result.sessionsEnded }),
    };
  if (result.reason === 'not_admin')
    throw new TRPCError({
      code: 'FORBIDDEN',
      message: `this needs the admin role; ${ctx.session.operator.name} is ${result.now.disabled ? 'disabled' : result.now.role} now`,
    });
  if (result.reason === 'session_ended' || result.reason === 'token_ended')
    throw new TRPCError({
      code: 'UNAUTHORIZED',
      message:
        result.reason === 'session_ended'
          ? 'your session has ended; sign in again'
          : 'the API token this request came with was revoked or has expired; nothing was changed',
    });
  if (result.reason === 'self')
    throw new TRPCError({ code: 'CONFLICT', message: 'an admin cannot change or disable itself; ask another admin' });
  throw new TRPCError({ code: 'NOT_FOUND', message: `no operator named ${target}` });
}
