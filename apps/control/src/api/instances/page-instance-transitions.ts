import { z } from 'zod';
import { bigintIdKey, historyPageSizes, oneBound, pageLimit } from '../lists/history-keys.ts';
import { viewerProcedure } from '../trpc.ts';

export const pageInstanceTransitionsInput = z
  .object({
    id: z.uuid(),
    /** The id of the oldest transition held: the page is the ones before it. */
    before: bigintIdKey.optional(),
    /** The id of the newest transition held: the page is the ones after it. */
    after: bigintIdKey.optional(),
    limit: pageLimit(historyPageSizes.transitions),
  })
  .strict()
  .superRefine(oneBound);

/**
 * A page of an instance's transition history by id, compared as a bigint (ADR 0035), oldest first
 * within the page: before a key (and `more` when older rows remain) or after one (and `more` when
 * newer rows remain; ask again from the last). An unknown instance has none.
 */
export const pageInstanceTransitionsProcedure = viewerProcedure
  .input(pageInstanceTransitionsInput)
  .query(async ({ ctx, input }) => {
    const { transitions, truncated } = await ctx.engine.processes.history(input.id, input);
    return { rows: transitions.map((t) => ({ ...t, at: t.at.toISOString() })), more: truncated };
  });
