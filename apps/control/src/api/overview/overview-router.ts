import { z } from 'zod';
import { router, viewerProcedure } from '../trpc.ts';
import { readOverview } from './read-overview.ts';

/** What needs attention, in one snapshot: the counts the console's landing page starts from. */
export const overviewRouter = router({
  get: viewerProcedure.input(z.object({}).strict().optional()).query(({ ctx }) => readOverview(ctx.db)),
});
