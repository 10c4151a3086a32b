import { TRPCError } from '@trpc/server';
import { outboxLag, readOutboxRow } from '@sagaflow/engine';
import { z } from 'zod';
import { viewerProcedure, router } from '../trpc.ts';

/**
 * The outbox as operators see it: how much is waiting to be published, how old, how much is dead;
 * and one row by its id, what a requeue (`outbox.requeue`, through `repairs`) is drafted against.
 */
export const outboxRouter = router({
  lag: viewerProcedure.input(z.object({}).strict().optional()).query(({ ctx }) => outboxLag(ctx.db)),
  /** One outbox row: its message, source, status, attempts and last error (no payload). */
  get: viewerProcedure.input(z.object({ id: z.uuid() }).strict()).query(async ({ ctx, input }) => {
    const row = await readOutboxRow(ctx.db, input.id);
    if (!row) throw new TRPCError({ code: 'NOT_FOUND', message: `outbox row ${input.id} does not exist` });
    return row;
  }),
});
