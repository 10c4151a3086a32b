import { z } from 'zod';
import { viewerProcedure } from '../trpc.ts';

/**
 * The flows this control plane can start, each with the JSON Schema of its input (null when it
 * declares none, or its validator has no JSON Schema converter): the console renders its start form
 * from it. The engine still validates every start against the schema itself.
 */
export const listStartableFlows = viewerProcedure
  .input(z.object({}).strict().optional())
  .query(({ ctx }) => ctx.engine.describeFlows());
