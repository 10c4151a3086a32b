import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { createOperator } from '../../auth/create-operator.ts';
import { recordAuditEvent } from '../../auth/record-audit-event.ts';
import { roles } from '../../auth/roles.ts';
import { normaliseName } from '../../auth/sign-in.ts';
import { adminProcedure, router } from '../trpc.ts';

const name = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9._@-]+$/, 'letters, digits and . _ @ - only');

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
          displayName: z.string().trim().min(1).max(200),
          role: z.enum(roles),
          password: z.string().min(12, 'at least 12 characters').max(1000),
        })
        .strict(),
    )
    .mutation(async ({ ctx, input }) => {
      if (await ctx.db.prisma.operator.findUnique({ where: { name: normaliseName(input.name) } }))
        throw new TRPCError({ code: 'CONFLICT', message: `an operator named ${normaliseName(input.name)} exists` });
      const by = ctx.session.operator;
      const id = await createOperator(ctx.db.prisma, input, {
        id: by.id,
        name: by.name,
        address: ctx.address,
        at: ctx.auth.now(),
      });
      return { id };
    }),
  /** Changes a role; it applies from the operator's next request (roles are read per request). */
  setRole: adminProcedure
    .input(z.object({ name, role: z.enum(roles) }).strict())
    .mutation(async ({ ctx, input }) => {
      const target = normaliseName(input.name);
      const by = ctx.session.operator;
      return ctx.db.prisma.$transaction(async (tx) => {
        const row = await tx.operator.findUnique({ where: { name: target }, select: { role: true } });
        if (!row) throw new TRPCError({ code: 'NOT_FOUND', message: `no operator named ${target}` });
        await tx.operator.update({ where: { name: target }, data: { role: input.role, updated_at: ctx.auth.now() } });
        await recordAuditEvent(tx, {
          at: ctx.auth.now(),
          actorId: by.id,
          actor: by.name,
          action: 'operator_role_changed',
          targetType: 'operator',
          targetId: target,
          outcome: 'succeeded',
          address: ctx.address,
          details: { from: row.role, to: input.role },
        });
        return { name: target, role: input.role };
      });
    }),
});
