import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { Engine } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { drivenOn } from '../review20/record.ts';
import { judgeSiblings, replayChild, runDueWakes, trackedDeps } from '../review23/support/sibling-children.ts';
import { anomaliesOf, lateParent } from '../review24/support/late-flows.ts';
import { bareEngine } from '../harness.ts';
import { outageDeps, watchHolds } from './support/outage.ts';

/**
 * Review 27, attack 3 (ADR 0010 decisions 2-4, ADR 0093 decision 1). Worker A (its own engine, whose every
 * transaction goes through a driver the test can cut; its row in `workers` says it is alive, as its pool's
 * heartbeat would) parks the parent `Promise.all([ctx.child(A), ctx.action(side)])` on A while `side` runs.
 * The database goes away for A; `side` ends; its late write spends its retry budget and goes to A's backlog.
 * Then A's pool stops while the database is still away (HeldOutcomes.release: one last try, which fails,
 * and the outcome is logged and dropped) and A's row says gone (its beats stopped).
 * - `child-open`: the child A is still open then; B (another engine) runs it and follows every wake.
 * - `child-done-first`: B ran the child and the parent's wake before the outage ended A's pool: that replay
 *   parked on `side` as running on a live worker (no stuck reason, no wake); then A's pool stops.
 *
 * Guarantees: nothing waits for ever — once A is gone the run has a wake due or a stuck reason (after a
 * monitor pass, ADR 0010 decision 4); the step is reclaimed (kick) and run again as a new attempt; its
 * outcome is recorded once; `side` ran once per recorded attempt; the parent ends once.
 */
describe(`a late write whose budget runs out while the database is away (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const when of ['child-open', 'child-done-first'] as const)
    it(`A's pool stops holding the outcome (${when})`, async () => {
      const s = lateParent(db, { shape: 'child+step', sideEnds: 'completes' });
      const a: Engine = bareEngine(db, {
        clock: s.clock,
        flows: [...s.e.runtime.registry.flows.values()],
        actions: [...s.e.runtime.registry.actions.values()],
        config: { worker: { outcome_retry: { max_attempts: 2, base_delay_ms: 1, max_delay_ms: 1 } } },
        faults: s.e.runtime.faults,
      });
      const b = s.e;
      const outage = outageDeps(a.runtime);
      // Every statement of worker A goes through the driver the test cuts (its backlog's included).
      a.runtime.driver = outage.deps.driver;
      const holds = watchHolds(a.runtime);
      await db.prisma.worker.create({ data: { id: a.runtime.workerId } });
      const runId = await s.start();
      const side = s.holdAction('side');
      const r1 = trackedDeps(db, a.runtime);
      const live = executeRun(r1.deps, runId);
      await side.reached;
      expect(await live).toBe('parked');
      await r1.quiet();
      const row = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 3 } });

      if (when === 'child-done-first') {
        expect(await replayChild(db, b, runId, 2)).toBe('Completed');
        await runDueWakes(db, b, runId);
        const parked = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        expect([parked.status, parked.stuck_reason]).toEqual(['Waiting', null]);
      }

      outage.state.mode = 'fail';
      side.release();
      await holds.heldFor(3);
      // A's pool stops mid-outage: its last try fails, the outcome is logged and dropped; its beats stop.
      await a.runtime.heldOutcomes.release();
      await db.prisma.worker.update({ where: { id: a.runtime.workerId }, data: { stopped_at: new Date() } });

      if (when === 'child-open') {
        expect(await replayChild(db, b, runId, 2)).toBe('Completed');
        await runDueWakes(db, b, runId);
      }
      const drivenBeforeMonitor = await drivenOn(db, b, runId);
      await b.monitorPass();
      const afterMonitor = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      const drivenAfterMonitor = await drivenOn(db, b, runId);

      expect(await b.kick(runId)).toEqual({ kicked: true });
      await runDueWakes(db, b, runId);
      const sideRow = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: row.id } });
      const judged = await judgeSiblings(db, runId);
      console.log(
        `review27 budget-spent/${when}: drivenBeforeMonitor=${drivenBeforeMonitor} stuck=${afterMonitor.stuck_reason?.slice(0, 40)}`,
      );
      expect({
        stuck: afterMonitor.stuck_reason?.startsWith('owner_gone') ?? false,
        drivenAfterMonitor,
        side: [sideRow.status, sideRow.attempts, sideRow.claimed_by],
        parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
        duplicates: judged.parent.duplicateStepOutcomes,
        ranSide: s.ran.side,
        held: a.runtime.heldOutcomes.size,
        anomalies: (await anomaliesOf(db, runId)).filter((x) => !x.startsWith('claim_lost#')),
      }).toEqual({
        stuck: true,
        drivenAfterMonitor: true,
        side: ['Completed', 2, b.runtime.workerId],
        parent: ['Completed', 1, []],
        duplicates: [],
        ranSide: 2,
        held: 0,
        anomalies: [],
      });
    });
});
