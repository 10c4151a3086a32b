import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { viewerProcedure } from '../trpc.ts';
import { runTimingPolicy } from './run-timing-policy.ts';

/** One run with its steps, compensations, events and anomalies, and the timing settings it runs under. */
export const getRun = viewerProcedure.input(z.object({ id: z.uuid() }).strict()).query(async ({ ctx, input }) => {
  const detail = await ctx.engine.getRun(input.id);
  if (!detail) throw new TRPCError({ code: 'NOT_FOUND', message: `run ${input.id} does not exist` });
  return { ...detail, timing: runTimingPolicy(ctx.engine.config) };
});
