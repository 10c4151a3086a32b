import { pageRunCompensations } from '@sagaflow/engine';
import { z } from 'zod';
import { compensationKey, historyPageSizes, oneBound, pageLimit } from '../lists/history-keys.ts';
import { viewerProcedure } from '../trpc.ts';

export const pageRunCompensationsInput = z
  .object({
    id: z.uuid(),
    /** The (level, ordinal) of the last compensation held, reading back: the ones before it. */
    before: compensationKey.optional(),
    /** The (level, ordinal) of the newest held: the ones after it, in the order they run. */
    after: compensationKey.optional(),
    limit: pageLimit(historyPageSizes.compensations),
  })
  .strict()
  .superRefine(oneBound);

/** A page of a run's compensations by rollback level and ordinal (ADR 0035). */
export const pageRunCompensationsProcedure = viewerProcedure
  .input(pageRunCompensationsInput)
  .query(({ ctx, input }) => pageRunCompensations(ctx.db, input.id, input));
