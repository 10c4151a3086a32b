import { z } from 'zod';
import type { Json } from '@sagaflow/engine';
import { operatorProcedure } from '../trpc.ts';

const json: z.ZodType<Json> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(json), z.record(z.string(), json)]),
);

export const startRun = operatorProcedure
  .input(
    z
      .object({
        flowName: z.string().min(1).max(200),
        input: json,
        businessKey: z.string().min(1).max(200).optional(),
        tags: z.array(z.string().min(1).max(100)).max(20).optional(),
      })
      .strict(),
  )
  .mutation(({ ctx, input }) =>
    ctx.engine.startFlow(input.flowName, input.input, {
      ...(input.businessKey ? { businessKey: input.businessKey } : {}),
      ...(input.tags ? { tags: input.tags } : {}),
    }),
  );
