import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { finishedByMonitor } from '../../../src/api/sweep-unfinished-terminates.ts';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { fenceOnly, insertRun, parked, pass, states } from './support/tree.ts';

const reason = 'stopped by ops';

/**
 * Review 67, HELD: ADR 0140 §4, "Only a terminate's trees". Beside a terminate stopped after its fence (P1 → A1 →
 * B1, and an 'abandon' child AB of P1 with a 'propagate' child AB1), three trees whose runs were asked to cancel
 * with windows long closed, their wakes not run (the workers stopped): a cancel's (P2 → C2 → G2, cancelled with
 * a 1 s window), an expiry's (P3 → C3, P3 overdue and expired by the monitor's own expiry sweep, C3 asked with the
 * engine's 300 s window), and a run left open under an open parent by nothing at all (P4 → C4, C4 alone asked,
 * by a cancel of it). Two hours later, monitor passes end A1 and B1 only (Terminated, `finished_by`); AB and AB1
 * stay open, and no run of the other trees is Terminated.
 */
describe(`held: the monitor ends only a terminate's runs (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  beforeEach(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({
      db,
      flows: [parked],
      actions: [],
      config: { monitor: { unfinished_terminate_after_seconds: 60 } },
    });
  });
  afterEach(async () => {
    await t?.close();
    await db?.close();
  });

  it('a cancel’s, an expiry’s, an abandoned child’s and an open parent’s runs are left alone', async () => {
    const p1 = await insertRun(db);
    const a1 = await insertRun(db, { parent: p1, seq: 1 });
    const b1 = await insertRun(db, { parent: a1, seq: 1 });
    const ab = await insertRun(db, { parent: p1, seq: 2, policy: 'abandon' });
    const ab1 = await insertRun(db, { parent: ab, seq: 1 });

    const p2 = await insertRun(db);
    const c2 = await insertRun(db, { parent: p2, seq: 1 });
    const g2 = await insertRun(db, { parent: c2, seq: 1 });
    expect(await t.engine.cancel(p2, { reason: 'customer asked', cleanupSeconds: 1 })).toEqual({ requested: true });

    const p3 = await insertRun(db);
    const c3 = await insertRun(db, { parent: p3, seq: 1 });
    await db.prisma.flowRun.update({
      where: { id: p3 },
      data: { expires_at: new Date(t.clock.now().getTime() + 1000) },
    });

    const p4 = await insertRun(db);
    const c4 = await insertRun(db, { parent: p4, seq: 1 });
    expect(await t.engine.cancel(c4, { reason: 'customer asked', cleanupSeconds: 1 })).toEqual({ requested: true });

    t.clock.advance(1000);
    expect(await fenceOnly(t, db, p1, reason)).toBe(2);
    t.clock.advance(2000);
    await pass(t); // expires P3 (its own sweep, earlier in the pass); C3 asked with a 300 s window
    expect((await db.prisma.flowRun.findUniqueOrThrow({ where: { id: c3 } })).cancel_reason).toMatch(
      new RegExp(`^parent ${p3} expired`),
    );

    t.clock.advance(2 * 3600_000);
    let ended = 0;
    for (let n = await pass(t); n; n = await pass(t)) ended += n;
    expect(ended).toBe(2);
    const seen = await states(db, [a1, b1, ab, ab1, p2, c2, g2, c3, c4]);
    expect(seen[a1]).toEqual({
      status: 'Terminated',
      message: `parent ${p1} was terminated: ${reason}`,
      finishedBy: [finishedByMonitor],
    });
    expect(seen[b1]).toEqual({
      status: 'Terminated',
      message: `parent ${a1} was terminated: parent ${p1} was terminated: ${reason}`,
      finishedBy: [finishedByMonitor],
    });
    for (const id of [ab, ab1, p2, c2, g2, c3, c4]) expect(seen[id]).toMatchObject({ finishedBy: [] });
    for (const id of [ab, ab1, c2, g2, c3, c4]) expect(seen[id]!.status).toBe('Waiting');
  });
});
