import { pageRunEvents } from '@sagaflow/engine';
import { z } from 'zod';
import { bigintIdKey, bigintOf, historyPageSizes, oneBound, pageLimit } from '../lists/history-keys.ts';
import { viewerProcedure } from '../trpc.ts';

export const pageRunEventsInput = z
  .object({
    id: z.uuid(),
    /** The id of the oldest event held: the page is the events before it, newest first. */
    before: bigintIdKey.optional(),
    /** The id of the newest event held: the page is the events after it, oldest first. */
    after: bigintIdKey.optional(),
    limit: pageLimit(historyPageSizes.events),
  })
  .strict()
  .superRefine(oneBound);

/** A page of a run's events by id, compared as a bigint (ADR 0035). */
export const pageRunEventsProcedure = viewerProcedure.input(pageRunEventsInput).query(({ ctx, input }) =>
  pageRunEvents(ctx.db, input.id, {
    before: bigintOf(input.before),
    after: bigintOf(input.after),
    limit: input.limit,
  }),
);
