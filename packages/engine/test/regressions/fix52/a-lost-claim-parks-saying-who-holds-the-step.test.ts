import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';

/**
 * Review 52, D6 (ADR 0129). A worker whose claim was taken over while its action ran (the kit's
 * `faults.loseClaim`) has its outcome rejected and parks the run. It parked saying nothing; it now says
 * what a replay that meets the same row says, from the same code: the step, the worker holding it, its
 * attempt and since when, and that reclaim is off. Both ways a stale replay stops are covered: its
 * finish (one step) and the claim of its next step (two steps).
 */
const charge = defineAction({ name: 'fix52.charge', run: async (k: string) => ({ ok: k }) });
const ship = defineAction({ name: 'fix52.ship', run: async (k: string) => ({ shipped: k }) });
const payOnly = defineFlow({ name: 'fix52.pay', version: 1, run: async (ctx, k: string) => ctx.action(charge, k) });
const payAndShip = defineFlow({
  name: 'fix52.pay-ship',
  version: 1,
  run: async (ctx, k: string) => {
    await ctx.action(charge, k);
    return ctx.action(ship, k);
  },
});

describe(`a run parked after its worker lost the claim says who holds the step (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [payOnly, payAndShip], actions: [charge, ship] });
  });
  afterAll(async () => {
    await t?.closeAll();
  });

  it.each([
    ['its finish', payOnly, 'k-finish'],
    ['the claim of its next step', payAndShip, 'k-next'],
  ])('stopped at %s: the same reason a replay meeting the row gives', async (_, flow, key) => {
    t.faults.loseClaim('fix52.charge');
    const { runId } = await t.engine.startFlow(flow, key);
    const parked = await t.drive(runId, { skipTime: false, until: (x) => x.run.status === 'Waiting' });
    expect(parked.actions.map((a) => ({ name: a.name, status: a.status, attempts: a.attempts }))).toEqual([
      { name: 'fix52.charge', status: 'Running', attempts: 2 },
    ]);
    const since = parked.actions[0]?.startedAt;
    expect({ waitingFor: parked.run.waitingFor, stuckReason: parked.run.stuckReason }).toEqual({
      waitingFor: `step 1 (fix52.charge) is running on another worker (fault:other-worker, attempt 2, since ${since}); reclaim is off for this step, so if that worker died the run waits for an operator`,
      stuckReason: null,
    });

    // The other way to this state: a replay that meets the row Running under the rival (claim_lost). The
    // reason is wiped first, so what is read next is that replay's own.
    await t.db.prisma.flowRun.update({ where: { id: runId }, data: { waiting_for: null } });
    await t.faults.duplicateDelivery(runId);
    const again = await t.drive(runId, { skipTime: false, until: (x) => x.run.waitingFor !== null });
    expect(again.anomalies.map((a) => a.code)).toContain('claim_lost');
    expect(again.run.waitingFor).toBe(parked.run.waitingFor);
  });
});
