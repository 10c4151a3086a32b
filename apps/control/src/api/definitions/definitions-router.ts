import { z } from 'zod';
import { router, viewerProcedure } from '../trpc.ts';
import { readDefinitions } from './read-definitions.ts';

/** Flows and processes with their versions and live counts, for the console's definitions page. */
export const definitionsRouter = router({
  list: viewerProcedure.input(z.object({}).strict().optional()).query(({ ctx }) => readDefinitions(ctx)),
});
