import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { finishedByMonitor } from '../../../src/api/sweep-unfinished-terminates.ts';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { fenceOnly, insertRun, parked, pass, states } from './support/tree.ts';

/** An operator's reason of 1,500 characters (limits.text_length raised to 5,000), its cause at the start. */
const reason = `INC-4711: ${'x'.repeat(1480)} end-of-reason`;

/**
 * Review 67, ADR 0140 §1: the monitor ends each run "as the batch would have, through the same terminateOne:
 * Terminated, with the batch's reason (the parent's reason quoted as the fence quotes it)".
 *
 * P → C → G, all 'propagate'. The operator terminates C (a child; P stays open) with a reason of 1,500
 * characters. The fence gives G `parent <C> was terminated: <the whole reason>`, and so do the terminate's
 * batches (`listTreeToTerminate` quotes the root's reason whole at the first level). The terminate stops after
 * its fence; past the grace the monitor ends G.
 *
 * `findUnfinishedTerminates` passes a parent's reason through `inherited` (its last 1,000 characters after an
 * ellipsis) whenever the parent has a parent of its own, including a terminate's own root that is a child: G's
 * reason, from the monitor, is cut to its last 1,000 characters and loses the start (the incident number),
 * unlike the fence's reason on the same row, and unlike the terminate sent again on an identical tree.
 */
describe(`a long reason under a terminated child (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  beforeEach(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({
      db,
      flows: [parked],
      actions: [],
      config: { monitor: { unfinished_terminate_after_seconds: 60 }, limits: { text_length: 5000 } },
    });
  });
  afterEach(async () => {
    await t?.close();
    await db?.close();
  });

  async function chain() {
    const p = await insertRun(db);
    const c = await insertRun(db, { parent: p, seq: 1 });
    const g = await insertRun(db, { parent: c, seq: 1 });
    return { p, c, g };
  }

  it('the monitor gives G the reason the terminate sent again gives it (the whole of C’s)', async () => {
    // The reference: an identical tree whose terminate stopped at its fence, then sent again.
    const ref = await chain();
    const mine = await chain();
    t.clock.advance(1000);
    expect(await fenceOnly(t, db, ref.c, reason)).toBe(1);
    expect(await fenceOnly(t, db, mine.c, reason)).toBe(1);
    expect(await t.engine.terminate(ref.c, { reason })).toEqual({ terminated: true });
    const byBatch = (await states(db, [ref.g]))[ref.g]!;
    expect(byBatch).toEqual({
      status: 'Terminated',
      message: `parent ${ref.c} was terminated: ${reason}`,
      finishedBy: [null],
    });
    const fenced = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: mine.g } });
    expect(fenced.cancel_reason).toBe(`parent ${mine.c} was terminated: ${reason}`);

    t.clock.advance(65_000);
    expect(await pass(t)).toBe(1);
    const byMonitor = (await states(db, [mine.g]))[mine.g]!;
    expect({ ...byMonitor, message: String(byMonitor.message).slice(0, 80) }).toEqual({
      status: 'Terminated',
      message: `parent ${mine.c} was terminated: ${reason}`.slice(0, 80),
      finishedBy: [finishedByMonitor],
    });
    expect(byMonitor.message).toBe(`parent ${mine.c} was terminated: ${reason}`);
    // P, whose child C is, stays open: nothing of it was touched.
    expect((await states(db, [mine.p]))[mine.p]!.status).toBe('Waiting');
  });
});
