import { TRPCError } from '@trpc/server';
import { listDeadOutbox, maxDeadOutboxRows, outboxLag, readOutboxRow } from '@sagaflow/engine';
import { z } from 'zod';
import { viewerProcedure, router } from '../trpc.ts';

/**
 * The outbox as operators see it: how much is waiting to be published, how old, how much is dead;
 * the Dead rows, and one row by its id, what a requeue (`outbox.requeue`, through `repairs`) is drafted against.
 */
export const outboxRouter = router({
  lag: viewerProcedure.input(z.object({}).strict().optional()).query(({ ctx }) => outboxLag(ctx.db)),
  /** One outbox row: its message, source, status, attempts and last error (no payload). */
  get: viewerProcedure.input(z.object({ id: z.uuid() }).strict()).query(async ({ ctx, input }) => {
    const row = await readOutboxRow(ctx.db, input.id);
    if (!row) throw new TRPCError({ code: 'NOT_FOUND', message: `outbox row ${input.id} does not exist` });
    return row;
  }),
  /**
   * The Dead rows, the longest dead first (at most `limit`, of one destination and/or one instance if
   * given; `after` the last row of the previous page): what the console's Dead outbox list and `sagaflow
   * requeue --dead` / `--instance` draft a bulk requeue against.
   */
  dead: viewerProcedure
    .input(
      z
        .object({
          limit: z.number().int().min(1).max(maxDeadOutboxRows).default(100),
          destination: z.string().min(1).max(200).optional(),
          /** Only the Dead rows of this instance (or run): their source. */
          instanceId: z.uuid().optional(),
          /** The next page: the `availableAt` and `id` of the last row of the previous one. */
          after: z.object({ availableAt: z.iso.datetime(), id: z.uuid() }).strict().optional(),
        })
        .strict()
        .optional(),
    )
    .query(({ ctx, input }) =>
      listDeadOutbox(ctx.db, {
        limit: input?.limit ?? 100,
        destination: input?.destination,
        instanceId: input?.instanceId,
        after: input?.after,
      }),
    ),
});
