import { TRPCError } from '@trpc/server';
import { instanceStatuses, type InstanceStatus } from '@sagaflow/engine';
import { z } from 'zod';
import { nameInput } from '../lists/keyset-page.ts';
import { viewerProcedure } from '../trpc.ts';
import { toInstanceSummary } from './instance-summary.ts';

export const listInstancesInput = z
  .object({
    status: z.enum(instanceStatuses as [InstanceStatus, ...InstanceStatus[]]),
    processName: nameInput.optional(),
    /** Only instances not updated for at least this long (a stalled-instance check). */
    staleForSeconds: z
      .number()
      .int()
      .min(0)
      .max(366 * 24 * 3600)
      .optional(),
    limit: z.number().int().min(1).max(200).default(100),
  })
  .strict();

/**
 * Instances in one status, least recently updated first (seed 002's findByStatus; no paging). The
 * engine never decodes their state for this, so it stays cheap with many instances.
 */
export const listInstances = viewerProcedure.input(listInstancesInput).query(async ({ ctx, input }) => {
  if (input.processName !== undefined) {
    const registered = ctx.engine.processes.definitions;
    // Parsed by zod so the error reads and carries `field` like any other bad input.
    const check = z
      .object({
        processName: z.string().refine((name) => registered.has(name), {
          message: `no process named "${input.processName}" is registered (known: ${[...registered.keys()].join(', ') || 'none'})`,
        }),
      })
      .safeParse({ processName: input.processName });
    if (!check.success) throw new TRPCError({ code: 'BAD_REQUEST', cause: check.error });
  }
  // "Strictly before" now would hide an instance saved in this very millisecond.
  const updatedBefore = new Date(Date.now() + 1 - (input.staleForSeconds ?? 0) * 1000);
  const found = await ctx.engine.processes.findByStatus(input.status, updatedBefore, input.limit, {
    ...(input.processName !== undefined ? { processName: input.processName } : {}),
  });
  return found.map(toInstanceSummary);
});
