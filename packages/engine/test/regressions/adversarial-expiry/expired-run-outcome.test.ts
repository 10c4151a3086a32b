import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow, isFlowError, NonRetryableError } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';

/**
 * How an expired run ends, and what its plan says.
 *
 * 1. Seed 000: once the monitor's deadline fires "the step/run is marked Expired — a give-up,
 *    surfaced as a business failure"; README: "the flow gets FlowError('expired') at its live step,
 *    compensates in its cleanup window and the run ends `Expired`". execute-run.ts only maps a THROW
 *    to Expired; a flow that catches the expiry, compensates and returns (the README's own
 *    reservation pattern) ends Completed with expired_at set.
 * 2. ADR 0007: "the compensations registered by then are the plan (recorded on run.expiry_started)".
 *    For a run overdue inside a rollback level that has not finished, planRollback reads
 *    session.compensations AFTER runCompensateStep spliced them out, so the plan records [] although
 *    the level's compensation has not run.
 */
const log: string[] = [];
let undoFailures = 0;
const reserve = defineAction({ name: 'ax-eo-reserve', run: async (i: { id: string }) => i });
const unreserve = defineAction({
  name: 'ax-eo-unreserve',
  retry: { maxAttempts: 5, backoff: { initialMs: 600_000, jitter: false } },
  run: async (i: { id: string }) => {
    if (undoFailures-- > 0) throw new Error('refund service down');
    log.push(`unreserve ${i.id}`);
    return { ok: true };
  },
});
const decline = defineAction({
  name: 'ax-eo-decline',
  run: async (): Promise<null> => {
    throw new NonRetryableError('card declined');
  },
});

/** Catches the expiry, cleans up, and returns a business answer. */
const reservation = defineFlow({
  name: 'ax-eo-reservation',
  version: 1,
  run: async (ctx, input: { id: string }) => {
    await ctx.action(reserve, input).compensateWith(unreserve, (o) => ({ id: o.id }));
    try {
      await ctx.awaitSignal('confirm', { timeoutSeconds: 3600 });
      return { status: 'confirmed' };
    } catch (err) {
      if (!isFlowError(err, 'expired')) throw err;
      await ctx.compensate();
      return { status: 'gave up' };
    }
  },
});

const payment = defineFlow({
  name: 'ax-eo-payment',
  version: 1,
  run: async (ctx, input: { id: string }) => {
    try {
      await ctx.action(reserve, input).compensateWith(unreserve, (o) => ({ id: o.id }));
      return await ctx.action(decline, null);
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe(`adversarial expiry: how an expired run ends (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [reservation, payment], actions: [reserve, unreserve, decline] });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('a flow that catches the expiry, compensates and returns still ends Expired', async () => {
    const { runId } = await t.engine.startFlow(reservation, { id: 'a' }, { expiresInSeconds: 60 });
    await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    t.clock.advance(61_000);
    expect((await t.engine.sweepExpiredRuns()).expired).toEqual([runId]);
    const done = await t.drive(runId, { skipTime: false });
    expect(log).toContain('unreserve a');
    const row = await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect({ expiredAt: row.expired_at !== null, status: row.status }).toEqual({ expiredAt: true, status: 'Expired' });
    expect(done.run.status).toBe('Expired');
  });

  it("a run overdue inside an unfinished rollback level records that level's compensations as its plan", async () => {
    undoFailures = 1; // the undo fails once and waits 10 minutes for its retry
    const { runId } = await t.engine.startFlow(payment, { id: 'b' }, { expiresInSeconds: 60 });
    // Parked mid-rollback, waiting for the undo's retry: a run undoing shows Compensating (issue 13).
    await t.drive(runId, {
      skipTime: false,
      until: (d) => d.run.status === 'Compensating' && d.run.waitingFor !== null,
    });
    const comp = await t.db.prisma.compensationRun.findFirstOrThrow({ where: { run_id: runId } });
    expect(comp.status).toBe('Failed');
    // The workers stop here: once the sweep has expired the run, a worker would replay it and run
    // the undo in its cleanup window, so "not yet" below would race that worker.
    await t.engine.stopWorkers();
    t.clock.advance(61_000);
    expect((await t.engine.sweepExpiredRuns()).expired).toEqual([runId]);
    const started = await t.db.prisma.flowEvent.findFirstOrThrow({
      where: { run_id: runId, type: 'run.expiry_started' },
    });
    expect(log).not.toContain('unreserve b'); // the undo has not happened yet
    expect(started.data).toMatchObject({ compensations: ['ax-eo-unreserve'] });
  });
});
