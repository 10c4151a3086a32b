import { TRPCError } from '@trpc/server';
import { EngineError, type RepairKind } from '@sagaflow/engine';
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
 * transition) needs an admin to approve it too. The approver is the session's operator; the person
 * behind an API token is also whoever created it, on either side of the decision (ADR 0111).
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
    await requireDecider(ctx, input.id, 'approve');
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
      await requireDecider(ctx, input.id, 'reject');
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

/**
 * Who may decide an approval, beyond the engine's own check (the drafter's name is not the
 * approver's). A command only an admin may draft is only an admin's to approve or reject. And the
 * two-person rule holds for people, not names: an admin may create an API token for any operator and
 * holds its secret (ADR 0021), so the people behind a credential are its operator and its creator.
 * The approver's side is its operator and, with a token, the token's creator; the drafter's side is
 * the drafter and the creator of the token it drafted with (its `repair_drafted` row, written in the
 * draft's transaction, ADR 0107). Both sides are fixed once drafted and signed in, so reading them
 * before the engine decides races with nothing. Any person on both sides is refused as
 * `approval_by_drafter`, naming who made the token.
 */
async function requireDecider(ctx: SignedInContext, id: string, verb: 'approve' | 'reject'): Promise<void> {
  const found = await ctx.engine.approvals.get(id);
  if (!found) return; // the engine says it does not exist
  const info = ctx.engine.repairs.catalogue[found.command as RepairKind] as { adminOnly: boolean } | undefined;
  const { operator } = ctx.session;
  if (info?.adminOnly && operator.role !== 'admin')
    throw new TRPCError({
      code: 'FORBIDDEN',
      message: `${found.command} needs the admin role to approve; ${operator.name} is ${operator.role}`,
    });
  if (found.drafter === operator.name) return; // the engine refuses it in its own words
  const token = ctx.session.via === 'token' ? ctx.session.token : null;
  const draftedWith = await draftTokenCreator(ctx, found.id);
  const drafterSide = [found.drafter, draftedWith];
  const shared = [operator.name, token?.createdBy].find((person) => person && drafterSide.includes(person));
  if (!shared) return;
  const draftedBy =
    draftedWith && draftedWith !== found.drafter
      ? `${found.drafter} drafted this ${found.command} with an API token ${draftedWith} created for it`
      : `${found.drafter} drafted this ${found.command}`;
  const decidedBy =
    token && token.createdBy !== operator.name
      ? `${operator.name}'s API token "${token.name}" (${token.hint}…) was created by ${token.createdBy}`
      : `${operator.name} would ${verb} it`;
  throw new EngineError(
    'approval_by_drafter',
    `${draftedBy}, and ${decidedBy}: ${shared} is on both sides, so cannot ${verb} it: a second operator must (two-person rule)`,
    { details: { approvalId: found.id, drafter: found.drafter, person: shared } },
  );
}

/** Who created the API token a draft was made with (from its `repair_drafted` row), or null. */
async function draftTokenCreator(ctx: SignedInContext, id: string): Promise<string | null> {
  const row = await ctx.db.prisma.auditEvent.findFirst({
    where: { action: 'repair_drafted', target_type: 'approval', target_id: id },
    select: { details: true },
  });
  const details = row?.details;
  if (details === null || typeof details !== 'object' || Array.isArray(details)) return null;
  const by = (details as Record<string, unknown>).tokenCreatedBy;
  return typeof by === 'string' ? by : null;
}
