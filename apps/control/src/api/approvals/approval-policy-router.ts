import { recordAuditEvent } from '../../auth/record-audit-event.ts';
import { z } from 'zod';
import { adminProcedure, router, viewerProcedure } from '../trpc.ts';

/**
 * Which repair commands need a second operator (ADR 0020). Anyone signed in may read it (the console
 * says "this will wait for approval" before a click); only an admin sets it, and each change is a row
 * in the audit trail, written in the same transaction as the change.
 */
export const approvalPolicyRouter = router({
  get: viewerProcedure.input(z.object({}).strict().optional()).query(({ ctx }) => ctx.engine.approvals.policy()),
  /** Replaces the policy; the engine validates it and names a refused field. */
  set: adminProcedure
    .input(z.looseObject({ gatedCommands: z.array(z.string()).max(100), bulkThreshold: z.number().nullable() }))
    .mutation(({ ctx, input }) => {
      const by = ctx.session.operator;
      return ctx.engine.approvals.setPolicy(input, {
        actor: by.name,
        audit: (tx, change) =>
          recordAuditEvent(tx, {
            at: ctx.auth.now(),
            actorId: by.id,
            actor: by.name,
            action: 'approval_policy_changed',
            targetType: 'approval_policy',
            targetId: 'repairs',
            outcome: 'succeeded',
            address: ctx.address,
            details: {
              gatedBefore: change.before.gatedCommands.join(','),
              gatedAfter: change.after.gatedCommands.join(','),
              bulkThresholdBefore: change.before.bulkThreshold,
              bulkThresholdAfter: change.after.bulkThreshold,
            },
          }),
      });
    }),
});
