import { pageRunSteps } from '@sagaflow/engine';
import { z } from 'zod';
import { historyPageSizes, oneBound, pageLimit, sequenceKey } from '../lists/history-keys.ts';
import { viewerProcedure } from '../trpc.ts';

export const pageRunStepsInput = z
  .object({
    id: z.uuid(),
    /** The sequence of the oldest step held: the page is the steps before it, newest first. */
    before: sequenceKey.optional(),
    /** The sequence of the newest step held: the page is the steps after it, oldest first. */
    after: sequenceKey.optional(),
    limit: pageLimit(historyPageSizes.steps),
  })
  .strict()
  .superRefine(oneBound);

/** A page of a run's steps by sequence (ADR 0035); an unknown run has none. */
export const pageRunStepsProcedure = viewerProcedure
  .input(pageRunStepsInput)
  .query(({ ctx, input }) => pageRunSteps(ctx.db, input.id, input));
