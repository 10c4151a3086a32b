import { router, viewerProcedure } from '../trpc.ts';
import { readSeries } from './read-series.ts';
import { seriesInput } from './series-window.ts';

/** The overview's charts: counts per minute or hour over a bounded window, zero-filled. */
export const seriesRouter = router({
  get: viewerProcedure.input(seriesInput).query(({ ctx, input }) => readSeries(ctx.db, input, ctx.auth.now())),
});
