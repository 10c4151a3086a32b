import { TRPCError } from '@trpc/server';
import type { ApprovalAudit, RepairKind } from '@sagaflow/engine';
import { recordOperatorAction } from '../audit/record-operator-action.ts';
import { tokenVia } from '../token-via.ts';
import { z } from 'zod';
import { operatorProcedure, router, type SignedInContext, viewerProcedure } from '../trpc.ts';
import { keyUseInput, readKeyUse } from './key-use.ts';

/**
 * What a client sends: the engine's repair command (kind, target, expected state, reason,
 * idempotency key and the command's parameters) without the actor. The engine checks every field
 * and names the one it refuses; this schema only keeps the actor out and reads the kind for the
 * role check.
 */
const noActor = z.never({ error: 'the actor is the signed-in operator; leave it out of the command' }).optional();
const noVia = z
  .never({ error: "how the actor signed in is the server's to say; leave via out of the command" })
  .optional();
const draftedCommand = z.looseObject({ kind: z.string(), actor: noActor, via: noVia });
const draftedBulk = z.looseObject({ kind: z.string(), actor: noActor, via: noVia, items: z.array(z.unknown()) });

/**
 * The command as the engine takes it: the actor is always the session's operator, never the client;
 * a command sent with an API token names the token too (`via`, on the audit row; ADR 0021).
 * A command the engine's catalogue marks admin-only (force a transition) needs an admin, to preview
 * as much as to apply; any other repair needs an operator (the procedure's own role).
 */
function drafted<T extends { kind: string }>({
  ctx,
  input,
}: {
  ctx: SignedInContext;
  input: T;
}): T & { actor: string; via?: string } {
  const info = ctx.engine.repairs.catalogue[input.kind as RepairKind] as { adminOnly: boolean } | undefined;
  const { operator } = ctx.session;
  if (info?.adminOnly && operator.role !== 'admin')
    throw new TRPCError({
      code: 'FORBIDDEN',
      message: `${input.kind} needs the admin role; ${operator.name} is ${operator.role}`,
    });
  return {
    ...input,
    actor: operator.name,
    ...(ctx.session.via === 'token' ? { via: tokenVia(ctx.session.token) } : {}),
  };
}

/**
 * Repairs through the engine's own API (ADR 0016, ADR 0019): the same lock, expectation check and
 * audit row as any other caller. A changed state is a 409 whose body carries the state now
 * (`data.repair.current`); a command the target cannot take is a 409 with `data.repair.blockers`.
 */
export const repairsRouter = router({
  /** Every command with its target kind, whether it is destructive and whether it is admin only. */
  catalogue: viewerProcedure.input(z.object({}).strict().optional()).query(({ ctx }) => ctx.engine.repairs.catalogue),
  /** What apply would do now; writes nothing. */
  preview: operatorProcedure.input(draftedCommand).query((opts) => opts.ctx.engine.repairs.preview(drafted(opts))),
  /**
   * Applies one command (tRPC reserves the name `apply`), or, when the approval policy gates it,
   * answers `status: 'awaiting_approval'` with the approval's id: nothing is applied until a second
   * operator approves it (ADR 0020).
   */
  applyOne: operatorProcedure
    .input(draftedCommand)
    .mutation((opts) => opts.ctx.engine.approvals.submit(drafted(opts), draftAudit(opts.ctx))),
  /** A preview of each item of a bulk command; nothing written. */
  previewBulk: operatorProcedure.input(draftedBulk).query((opts) => opts.ctx.engine.repairs.previewBulk(drafted(opts))),
  /**
   * One command over many targets, item by item, each with its own expected state and audit row; a
   * bulk the policy gates (its kind, or more targets than its threshold) answers `awaiting_approval`.
   */
  applyBulk: operatorProcedure
    .input(draftedBulk)
    .mutation((opts) => opts.ctx.engine.approvals.submitBulk(drafted(opts), draftAudit(opts.ctx))),
  /**
   * What became of an idempotency key, read-only (key-use.ts): its audit rows and its approval, if any.
   * The console asks it before offering a kept draft back (ADR 0120 addendum). An operator's, like
   * preview: keys are drafters' handles, and a viewer reads the same facts in the audit trail.
   */
  keyUse: operatorProcedure.input(keyUseInput).query(({ ctx, input }) => readKeyUse(ctx, input)),
});

/**
 * A new draft waiting for approval is a row of the audit trail naming its drafter, written in the
 * draft's own transaction (a replay is not new, and a command applied at once has its repair row).
 */
function draftAudit(ctx: SignedInContext): { audit: ApprovalAudit } {
  return {
    audit: (tx, approval) =>
      recordOperatorAction(ctx, tx, {
        action: 'repair_drafted',
        targetType: 'approval',
        targetId: approval.id,
        outcome: 'pending',
        reason: approval.reason,
        details: { command: approval.command, target: approval.target.id },
      }),
  };
}
