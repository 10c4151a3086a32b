import { TRPCError } from '@trpc/server';
import type { RepairKind } from '@sagaflow/engine';
import { z } from 'zod';
import { cursorInput, encodeCursor } from '../lists/page-cursor.ts';
import { recordOperatorAction } from '../audit/record-operator-action.ts';
import { storableText } from '../storable-text.ts';
import { tokenVia } from '../token-via.ts';
import { operatorProcedure, router, type SignedInContext, viewerProcedure } from '../trpc.ts';

export const approvalStatuses = [
  'pending',
  'applying',
  'applied',
  'conflict',
  'refused',
  'rejected',
  'expired',
] as const;

const uuidText = storableText(100);

/**
 * The approvals queue (ADR 0020): gated repair commands waiting for a second operator, and what
 * became of them. Anyone signed in reads it; an operator who did not draft a command approves or
 * rejects it (the drafter gets a 403 saying so), and a command only an admin may draft (force a
 * transition) needs an admin to approve it too. The approver is the session's operator.
 */
export const approvalsRouter = router({
  /** Newest first, keyset-paged; `status` narrows it (the console's queue asks for `pending` or `decided`). */
  list: viewerProcedure
    .input(
      z
        .object({
          /** One status, or `decided`: every status but pending. */
          status: z.enum([...approvalStatuses, 'decided']).optional(),
          cursor: cursorInput.optional(),
          limit: z.number().int().min(1).max(100).default(50),
          /** Sent by tRPC's infinite queries; only forward paging exists. */
          direction: z.literal('forward').optional(),
        })
        .strict()
        .optional(),
    )
    .query(async ({ ctx, input }) => {
      const limit = input?.limit ?? 50;
      const cursor = input?.cursor;
      if (cursor && cursor.order !== 'newest')
        throw new TRPCError({ code: 'BAD_REQUEST', message: 'input.cursor: not a cursor of this list; omit it' });
      const items = await ctx.engine.approvals.list({
        ...(input?.status === 'decided'
          ? { statuses: approvalStatuses.filter((st) => st !== 'pending') }
          : input?.status
            ? { statuses: [input.status] }
            : {}),
        ...(cursor ? { before: { at: cursor.at, id: cursor.id } } : {}),
        limit: limit + 1,
      });
      const page = items.slice(0, limit);
      const last = page.at(-1);
      const nextCursor =
        items.length > limit && last
          ? encodeCursor({ order: 'newest', at: new Date(last.createdAt), id: last.id })
          : null;
      return { items: page, nextCursor };
    }),
  /** One approval, with its command, preview and outcome. */
  get: viewerProcedure.input(z.object({ id: uuidText }).strict()).query(async ({ ctx, input }) => {
    const found = await ctx.engine.approvals.get(input.id);
    if (!found) throw new TRPCError({ code: 'NOT_FOUND', message: `no approval ${input.id}` });
    return found;
  }),
  /** Applies the command as drafted, still guarded by the state it was drafted against. */
  approve: operatorProcedure.input(z.object({ id: uuidText }).strict()).mutation(async ({ ctx, input }) => {
    await requireAdminFor(ctx, input.id);
    // A token names itself on the repair's audit row, as a repair made with one does (review 31).
    return ctx.engine.approvals.approve(
      input.id,
      ctx.session.operator.name,
      ctx.session.via === 'token' ? { via: tokenVia(ctx.session.token) } : {},
    );
  }),
  /** Refuses the command: nothing is applied; the reason is kept. */
  reject: operatorProcedure
    .input(z.object({ id: uuidText, reason: storableText(1000).trim().min(1, 'say why it is rejected') }).strict())
    .mutation(async ({ ctx, input }) => {
      await requireAdminFor(ctx, input.id);
      // The rejection's trail row commits with the decision (ADR 0107).
      return ctx.engine.approvals.reject(input.id, ctx.session.operator.name, input.reason, {
        audit: (tx, rejected) =>
          recordOperatorAction(ctx, tx, {
            action: 'repair_rejected',
            targetType: 'approval',
            targetId: rejected.id,
            outcome: 'rejected',
            reason: input.reason,
            details: { command: rejected.command, target: rejected.target.id, drafter: rejected.drafter },
          }),
      });
    }),
});

/** A command only an admin may draft is only an admin's to approve or reject. */
async function requireAdminFor(ctx: SignedInContext, id: string): Promise<void> {
  const found = await ctx.engine.approvals.get(id);
  if (!found) return; // the engine says it does not exist
  const info = ctx.engine.repairs.catalogue[found.command as RepairKind] as { adminOnly: boolean } | undefined;
  const { operator } = ctx.session;
  if (info?.adminOnly && operator.role !== 'admin')
    throw new TRPCError({
      code: 'FORBIDDEN',
      message: `${found.command} needs the admin role to approve; ${operator.name} is ${operator.role}`,
    });
}
