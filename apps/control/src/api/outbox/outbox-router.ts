import { outboxLag } from '@sagaflow/engine';
import { z } from 'zod';
import { viewerProcedure, router } from '../trpc.ts';

/** The outbox as operators see it: how much is waiting to be published, how old, how much is dead. */
export const outboxRouter = router({
  lag: viewerProcedure.input(z.object({}).strict().optional()).query(({ ctx }) => outboxLag(ctx.db)),
});
