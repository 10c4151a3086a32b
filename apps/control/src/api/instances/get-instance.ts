import { TRPCError } from '@trpc/server';
import { describeProcess, instancePendingWork } from '@sagaflow/engine';
import { z } from 'zod';
import { bigintIdKey, historyPageSizes } from '../lists/history-keys.ts';
import { viewerProcedure } from '../trpc.ts';
import { toInstanceSummary } from './instance-summary.ts';

/**
 * One instance: where it is, what it is failing on, the newest page of its transition history
 * (`instances.transitions` reads older and newer pages), and the operator
 * commands its process defines (with whether each is accepted in the instance's current state), the
 * process's states and transitions (for its drawing), its pending timeouts and its outbox rows (the newest
 * 100 and every older Dead one).
 * Read-only: the commands are run through `repairs`.
 */
export const getInstanceInput = z
  .object({
    id: z.uuid(),
    /**
     * The newest transition id the caller holds: `history` is then only the transitions after it
     * (oldest first, at most a page; `historyTruncated` says more newer ones remain), for a page
     * that polls (ADR 0035). Without it, `history` is the newest page and `historyTruncated` says
     * older ones remain.
     */
    historyAfter: bigintIdKey.optional(),
  })
  .strict();

export const getInstance = viewerProcedure.input(getInstanceInput).query(async ({ ctx, input }) => {
  const found = await ctx.engine.processes.find(input.id);
  if (!found) throw new TRPCError({ code: 'NOT_FOUND', message: `instance ${input.id} does not exist` });
  const instance = toInstanceSummary(found);
  const [history, pending] = await Promise.all([
    ctx.engine.processes.history(input.id, {
      limit: historyPageSizes.transitions.default,
      ...(input.historyAfter === undefined ? {} : { after: input.historyAfter }),
    }),
    instancePendingWork(ctx.db, input.id),
  ]);
  const def = ctx.engine.processes.definitions.get(instance.processName);
  const description = def ? describeProcess(def) : null;
  const operatorCommands = (description?.operatorCommands ?? []).map((c) => ({
    name: c.name,
    description: c.description,
    from: c.from,
    to: c.to,
    inputSchema: c.inputSchema,
    acceptedNow: instance.status === 'ACTIVE' && c.from.includes(instance.currentState),
  }));
  return {
    instance,
    process: description
      ? {
          registered: true,
          final: description.final,
          compensating: Object.keys(description.compensating),
          // What the console draws: every state and transition the definition declares.
          states: description.states,
          initial: description.initial,
          transitions: description.transitions,
        }
      : { registered: false, final: [], compensating: [], states: [], initial: null, transitions: [] },
    history: history.transitions.map((t) => ({ ...t, at: t.at.toISOString() })),
    historyTruncated: history.truncated,
    operatorCommands,
    timeouts: pending.timeouts,
    /** Its newest 100 outbox rows, then its older Dead rows (never hidden behind later rows; ADR 0122). */
    outbox: pending.outbox,
    /** Older rows exist than the newest 100 listed (none of them Dead unless `deadOutboxNotListed`). */
    outboxTruncated: pending.outboxTruncated,
    /** Dead rows of the instance `outbox` does not list (beyond 500 older ones); `sagaflow requeue --instance` finds them all. */
    deadOutboxNotListed: pending.deadOutboxNotListed,
  };
});
