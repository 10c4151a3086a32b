import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { capturingLogger } from '../../support/capturing-logger.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';
import { parkedWaiters, seedOpenChildren, visibility } from './support/overdue-runs.ts';

/**
 * Review 62 (ADR 0134 §1 and `isHeldUp`: an expiry whose statement runs out of the sweep's limit, 57014,
 * is treated as a held run; seed 000: a run the sweep cannot expire is journaled `expiry_failed`, counted
 * in `expiry_attempts` and says why it is stuck; invariant 3: every run reaches a terminal state or is
 * visibly stuck with a reason in the console).
 *
 * Attacked: an overdue parent whose one child has a wide subtree (100,000 open grandchildren). The expiry
 * cancels the child's subtree in ONE statement (`requestDescendantsCancel`), which outlasts the 1 s
 * `sweeps.transaction_timeout_ms` set here at every try: `statement_timeout` cancels it (57014). Nobody
 * holds any row. Is the overdue run, which no pass can expire, ever shown to an operator?
 */
describe('review 62: an overdue run whose expiry always runs out of its statement limit (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  const capture = capturingLogger();
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({
      db,
      flows: [waiter],
      actions,
      logger: capture.logger,
      config: { sweeps: { transaction_timeout_ms: 1_000 } },
    });
  });
  afterAll(async () => {
    await t?.close();
    await db?.close();
  });

  it('after passes that all time out, the run has a stuck reason or an anomaly saying so', async () => {
    const [parent] = await parkedWaiters(t, [60]);
    await seedOpenChildren(db, parent!, 1);
    const child = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: parent! } });
    await seedOpenChildren(db, child.id, 100_000);
    t.clock.advance(300_000);

    const passes = [];
    for (let pass = 1; pass <= 3; pass++) passes.push(await t.engine.sweepExpiredRuns());
    const logged = capture.lines
      .filter((l) => l.runId === parent && typeof l.msg === 'string')
      .map((l) => `${String(l.level)} ${String(l.msg)}`);
    const seen = { passes, logged, parent: await visibility(db, parent!) };
    // Not expired (each try ran out of its limit), and so it must say why it is stuck.
    expect(
      {
        expired: seen.parent.expired,
        visible: seen.parent.stuckReason !== null || seen.parent.anomalies.length > 0,
      },
      JSON.stringify(seen, null, 1),
    ).toEqual({ expired: false, visible: true });
  }, 90_000);
});
