import { z } from 'zod';
import { openRunStatuses, terminalRunStatuses } from '@sagaflow/engine';
import { nameInput } from '../lists/keyset-page.ts';
import { viewerProcedure } from '../trpc.ts';

const status = z.enum([...openRunStatuses, ...terminalRunStatuses]);

export const listRunsInput = z
  .object({
    status: z.array(status).max(20).optional(),
    flowName: nameInput.optional(),
    order: z.enum(['stalest', 'newest']).default('newest'),
    limit: z.number().int().min(1).max(500).default(100),
  })
  .strict()
  .prefault({});

export const listRuns = viewerProcedure.input(listRunsInput).query(({ ctx, input }) => ctx.engine.listRuns(input));
