import { TRPCError } from '@trpc/server';
import { readRunChanges } from '@sagaflow/engine';
import { z } from 'zod';
import {
  bigintIdKey,
  bigintOf,
  compensationKey,
  historyPageSizes,
  pageLimit,
  sequenceKey,
} from '../lists/history-keys.ts';
import { viewerProcedure } from '../trpc.ts';

/** The most open rows a poll refreshes: more than any run keeps running at once. */
const maxOpen = 500;

export const readRunChangesInput = z
  .object({
    id: z.uuid(),
    steps: z
      .object({
        /** The newest sequence held: new steps are the ones after it. */
        after: sequenceKey.optional(),
        /** The oldest sequence held: the count of steps from it checks nothing was missed. */
        from: sequenceKey.optional(),
        /** The sequences held in a status that can still change. */
        open: z.array(sequenceKey).max(maxOpen).default([]),
      })
      .strict()
      .prefault({}),
    events: z.object({ after: bigintIdKey.optional(), from: bigintIdKey.optional() }).strict().prefault({}),
    compensations: z
      .object({ after: compensationKey.optional(), open: z.array(z.uuid()).max(maxOpen).default([]) })
      .strict()
      .prefault({}),
    anomalies: z.object({ after: bigintIdKey.optional() }).strict().prefault({}),
    limit: pageLimit(historyPageSizes.changes),
  })
  .strict();

/**
 * What an open run's page polls (ADR 0035): the run's summary, the steps, events and compensations
 * newer than the newest it holds, the current rows of those it holds open, and how many steps and
 * events lie from the oldest it holds (fewer held than that: it missed one, and reads again).
 */
export const readRunChangesProcedure = viewerProcedure.input(readRunChangesInput).query(async ({ ctx, input }) => {
  const changes = await readRunChanges(ctx.db, input.id, {
    steps: input.steps,
    events: { after: bigintOf(input.events.after), from: bigintOf(input.events.from) },
    compensations: input.compensations,
    anomalies: { after: bigintOf(input.anomalies.after) },
    limit: input.limit,
  });
  if (!changes) throw new TRPCError({ code: 'NOT_FOUND', message: `run ${input.id} does not exist` });
  return changes;
});
