import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { publicProcedure } from '../trpc.ts';

export const getRun = publicProcedure.input(z.object({ id: z.uuid() }).strict()).query(async ({ ctx, input }) => {
  const detail = await ctx.engine.getRun(input.id);
  if (!detail) throw new TRPCError({ code: 'NOT_FOUND', message: `run ${input.id} does not exist` });
  return detail;
});
