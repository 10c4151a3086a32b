import { TRPCError } from '@trpc/server';
import { readRunHead, safeRepairsFor } from '@sagaflow/engine';
import { z } from 'zod';
import { historyPageSizes } from '../lists/history-keys.ts';
import { heldStuckReason, readHeldRuns } from '../../metrics/reads/read-held-runs.ts';
import { viewerProcedure } from '../trpc.ts';
import { runTimingPolicy } from './run-timing-policy.ts';

/**
 * One run with the newest page of its steps, compensations and events (each oldest first within the
 * page, as a timeline reads; `older` says where older rows remain, for `runs.steps`,
 * `runs.compensations` and `runs.events` to read), its anomalies, its stuck episodes' events
 * whatever their age, and the timing settings it runs under. Never the whole history (ADR 0035). A run the
 * monitor found held lately shows as stuck `run_held`, with the repairs safe for that (ADR 0138).
 */
export const getRun = viewerProcedure.input(z.object({ id: z.uuid() }).strict()).query(async ({ ctx, input }) => {
  const head = await readRunHead(ctx.db, input.id, {
    steps: historyPageSizes.steps.default,
    compensations: historyPageSizes.compensations.default,
    events: historyPageSizes.events.default,
    anomalies: 200,
    stuckEvents: 200,
  });
  if (!head) throw new TRPCError({ code: 'NOT_FOUND', message: `run ${input.id} does not exist` });
  const [held] = await readHeldRuns(ctx.db.prisma, { runIds: [input.id] });
  const stuckReason = held ? heldStuckReason(held) : head.run.stuckReason;
  return {
    run: held
      ? { ...head.run, stuckReason, safeRepairs: safeRepairsFor({ status: head.run.status, stuckReason }) }
      : head.run,
    actions: head.steps.rows.toReversed(),
    compensations: head.compensations.rows.toReversed(),
    events: head.events.rows.toReversed(),
    anomalies: head.anomalies,
    /** Every stuck episode's events (the newest 200), oldest first: the stuck history is never cut by paging. */
    stuckEvents: head.stuckEvents.toReversed(),
    older: { steps: head.steps.more, compensations: head.compensations.more, events: head.events.more },
    timing: runTimingPolicy(ctx.engine.config),
  };
});
