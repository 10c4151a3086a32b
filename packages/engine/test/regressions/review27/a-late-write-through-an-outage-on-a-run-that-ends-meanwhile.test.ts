import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { Engine } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { lateOutcomeTurnedAway } from '../../support/late-outcome.ts';
import { judgeSiblings, runDueWakes, trackedDeps } from '../review23/support/sibling-children.ts';
import { anomaliesOf, lateParent } from '../review24/support/late-flows.ts';
import { recordOf } from '../review20/record.ts';
import { bareEngine } from '../harness.ts';
import { outageDeps, watchHolds } from './support/outage.ts';

/**
 * Review 27, attack 5 (ADR 0093 decision 1 with ADR 0010's backlog, ADR 0011, ADR 0091). Worker A parks
 * the parent `Promise.all([ctx.child(A), ctx.action(side)])` on A while `side` runs (held). The database
 * goes away for worker A; `side` ends and its late write spends its budget (A's backlog) or hangs in
 * flight. Meanwhile, on worker B (another engine), the run is cancelled (its wakes driven to the end) or
 * terminated. Then the database answers A and the late write goes out.
 *
 * Guarantees: the run ends once, nothing is recorded after its terminal event; the late outcome meets
 * its fence and is journaled (write_refused once the run has ended, or outcome_rejected), never
 * dropped silently; `side` ran once; the backlog is empty; the child A is not left open.
 */
describe(`a late write through an outage on a run that ends meanwhile (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const end of ['cancel', 'terminate'] as const)
    for (const late of ['in-the-backlog', 'in-flight'] as const)
      for (const sideEnds of ['completes', 'fails-for-good'] as const)
        it(`${end} during the outage; side ${sideEnds}, its late write ${late}`, async () => {
          const s = lateParent(db, { shape: 'child+step', sideEnds });
          const a: Engine = bareEngine(db, {
            clock: s.clock,
            flows: [...s.e.runtime.registry.flows.values()],
            actions: [...s.e.runtime.registry.actions.values()],
            config: { worker: { outcome_retry: { max_attempts: 2, base_delay_ms: 1, max_delay_ms: 1 } } },
            faults: s.e.runtime.faults,
          });
          const b = s.e;
          const holds = watchHolds(a.runtime);
          const runId = await s.start();
          const side = s.holdAction('side');
          const outage = outageDeps(a.runtime);
          const r1 = trackedDeps(db, outage.deps);
          const live = executeRun(r1.deps, runId);
          await side.reached;
          expect(await live).toBe('parked');
          await r1.quiet();

          outage.state.mode = late === 'in-the-backlog' ? 'fail' : 'hang';
          side.release();
          if (late === 'in-the-backlog') await holds.heldFor(3);
          else await outage.hung;

          if (end === 'cancel') expect(await b.cancel(runId, { reason: 'review27' })).toEqual({ requested: true });
          else expect(await b.terminate(runId, { reason: 'review27' })).toEqual({ terminated: true });
          const wakes = await runDueWakes(db, b, runId);
          const beforeLate = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });

          if (late === 'in-the-backlog') {
            outage.state.mode = 'up';
            await a.runtime.heldOutcomes.retry();
          } else outage.resume();
          const turnedAway = await lateOutcomeTurnedAway(db, runId);
          await runDueWakes(db, b, runId);
          const judged = await judgeSiblings(db, runId);
          const rec = await recordOf(db, runId);
          const sideRow = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 3 } });
          expect({
            endedBeforeLate: beforeLate.finished_at !== null,
            parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
            duplicates: judged.parent.duplicateStepOutcomes,
            turnedAway: turnedAway.length,
            orphans: judged.orphans,
            children: judged.children.map((c) => c.open),
            held: a.runtime.heldOutcomes.size,
            ranSide: s.ran.side,
          }).toEqual({
            endedBeforeLate: true,
            parent: [end === 'cancel' ? 'Cancelled' : 'Terminated', 1, []],
            duplicates: [],
            turnedAway: 1,
            orphans: [],
            children: [false],
            held: 0,
            ranSide: 1,
          });
          // Recorded for the report: what the run's end says of the step whose outcome came late.
          console.log(
            `review27 ${end}/${late}/${sideEnds}: wakes=${wakes.replays} side=${sideRow.status} ` +
              `anomalies=${JSON.stringify(await anomaliesOf(db, runId))} compensations=${JSON.stringify(rec.compensations)} ` +
              `error=${JSON.stringify((await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).error)}`,
          );
        });
});
