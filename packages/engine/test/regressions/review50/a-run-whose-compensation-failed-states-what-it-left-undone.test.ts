import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';

/**
 * Review 50: a compensation that fails ends the run Failed (`compensation_failed`, seed 001: the
 * first failure stops the rollback and propagates). The run is closed with side effects nobody will
 * undo: the card charged at step 2 (its refund failed) and the seats reserved at step 1 (its release
 * never ran; the row stays Pending on a finished run). Seed 004: "Do not mark the process failed and
 * hope an operator infers which side effects already occurred." ADR 0091 made a TimedOut and a
 * Terminated run state exactly this (`leftUndone`); a run closed by a failed rollback is closed the
 * same way and must say it too: steps 1 and 2 are left undone.
 */
const refund = defineAction({
  name: 'r50-refund',
  run: async () => {
    throw new Error('refund API 503');
  },
});
const release = defineAction({ name: 'r50-release', run: async () => ({ released: true }) });
const charge = defineAction({ name: 'r50-charge', run: async () => ({ chargeId: 'ch_1' }) });
const reserve = defineAction({ name: 'r50-reserve', run: async () => ({ reservation: 'r1' }) });
const ship = defineAction({
  name: 'r50-ship',
  run: async () => {
    throw new Error('carrier down');
  },
});
const flow = defineFlow({
  name: 'r50-failed-rollback',
  version: 1,
  run: async (ctx) => {
    try {
      await ctx
        .action(reserve, null)
        .compensateWith(release, (o) => o)
        .run();
      await ctx
        .action(charge, null)
        .compensateWith(refund, (o) => o)
        .run();
      await ctx.action(ship, null).run();
    } catch (e) {
      await ctx.compensate();
      throw e;
    }
    return null;
  },
});

describe(`review 50: a run whose compensation failed states what it left undone (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [flow], actions: [refund, release, charge, reserve, ship] });
  });
  afterAll(async () => t?.closeAll());

  it('a rollback stopped by a failing refund leaves a Failed run naming the charge and the reservation as left undone', async () => {
    const d = await t.runToCompletion(flow, null);
    expect(d.run.status).toBe('Failed');
    expect((d.run.error as { code?: string }).code).toBe('compensation_failed');
    // ADR 0124 (fix 50): the release that never ran is not left Pending on the finished run; it is closed
    // Cancelled with an error saying it never ran and why (the review expected it to stay Pending).
    expect(d.compensations.map((c) => [c.name, c.status])).toEqual([
      ['r50-refund', 'Errored'],
      ['r50-release', 'Cancelled'],
    ]);
    expect((d.compensations[1]?.error as { name?: string; message?: string }).message).toMatch(
      /^never ran: the rollback stopped when compensation r50-refund of step 2 failed/,
    );
    expect(d.run.leftUndone?.compensation_failed).toEqual({
      sequence: 2,
      name: 'r50-refund',
      message: 'refund API 503',
    });
    expect(d.run.leftUndone?.steps.map((s) => s.compensation)).toEqual(['r50-release', 'r50-refund']);
    // A finished run takes no repair (invariant 1): the list says what is left for a person to do by hand.
    expect(d.run.safeRepairs).toEqual([]);
    expect(
      d.run.leftUndone?.steps.map((s) => [s.sequence, s.name]) ?? null,
      'the Failed run states the completed steps its failed rollback left undone (as TimedOut and Terminated do, ADR 0091)',
    ).toEqual([
      [1, 'r50-reserve'],
      [2, 'r50-charge'],
    ]);
  }, 60_000);
});
