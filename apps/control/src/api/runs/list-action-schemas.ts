import { z } from 'zod';
import { viewerProcedure } from '../trpc.ts';

/**
 * The registered actions with the JSON Schemas of their input and output: the console's
 * complete-step form is generated from the output schema. The repair checks the output itself.
 */
export const listActionSchemas = viewerProcedure
  .input(z.object({}).strict().optional())
  .query(({ ctx }) => ctx.engine.describeActions());
