import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { viewerProcedure } from '../trpc.ts';

export const getRun = viewerProcedure.input(z.object({ id: z.uuid() }).strict()).query(async ({ ctx, input }) => {
  const detail = await ctx.engine.getRun(input.id);
  if (!detail) throw new TRPCError({ code: 'NOT_FOUND', message: `run ${input.id} does not exist` });
  return detail;
});
