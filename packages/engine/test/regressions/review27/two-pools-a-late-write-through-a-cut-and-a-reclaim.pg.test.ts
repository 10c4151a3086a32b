import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, type Engine } from '../../../src/index.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { lateOutcomeTurnedAway } from '../../support/late-outcome.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate } from '../harness.ts';
import { recordOf } from '../review20/record.ts';
import { childrenOf } from '../review23/support/sibling-children.ts';
import { anomaliesOf } from '../review24/support/late-flows.ts';
import { startCutProxy } from './support/cut-proxy.ts';
import { killFlows } from './support/kill-flows.ts';

/**
 * Review 27, attack 1 with two real worker pools on PostgreSQL (ADR 0093/0094's open point, ADR 0010). Worker A
 * reaches the database through a TCP proxy the test cuts; worker B directly. Both share a business clock,
 * with reclaim on (a Running step's reclaim deadline 60 s after its claim). A's pool replays the parent
 * `Promise.all([ctx.child(A), ctx.action(side)])`, parks on child A (which waits for a signal) while `side`
 * runs. The proxy is cut; `side` ends; A's late write keeps failing and is retried (a long budget). The clock
 * passes the step's reclaim deadline (and every lease); B's pool starts, the child gets its signal, and B runs
 * the child, then the parent: it claims `side` again (attempt 2), runs it, and ends the parent. Then the
 * proxy lets A through again and its late write goes out.
 *
 * Guarantees: the step's outcome is recorded once (attempt 2's); A's attempt-1 outcome is journaled
 * (outcome_rejected or write_refused); `side` ran once per recorded attempt (2); the parent ends once,
 * Completed, nothing after its end.
 */
describe('two pools: a late write through a cut connection while the other pool reclaims the step (PostgreSQL)', () => {
  let db: Database & { url?: string };
  const closers: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
    await db.close();
  });

  it("B reclaims and ends the run; A's late write is turned away", async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project');
    const proxy = await startCutProxy(db.url);
    closers.push(() => proxy.close());
    const clock = new TestClock();
    const ran: string[] = [];
    const sideGate = gate();
    const sideReached = gate();
    let firstSide = true;
    const flows = killFlows(
      (name) => ran.push(name),
      async () => {
        if (!firstSide) return;
        firstSide = false;
        sideReached.open();
        await sideGate.promise;
      },
    );
    const config = (attempts: number) => ({
      worker: {
        poll_interval_ms: 20,
        transaction_wait_ms: 200,
        outcome_retry: { max_attempts: attempts, base_delay_ms: 5, max_delay_ms: 20 },
      },
      reclaim: { actions: { enabled: true, after_seconds: 60 } },
      logging: { anomaly_level: null },
    });
    const dbA = await createDatabase({ kind: 'postgres', url: proxy.url, poolSize: 4 });
    closers.push(() => dbA.close());
    const a: Engine = createEngine({
      db: dbA,
      clock,
      flows: flows.flows,
      actions: flows.actions,
      logger: pino({ level: 'silent' }),
      config: config(1000),
    });
    const b: Engine = createEngine({
      db,
      clock,
      flows: flows.flows,
      actions: flows.actions,
      logger: pino({ level: 'silent' }),
      config: config(20),
    });
    a.startWorkers();
    closers.push(() => a.stopWorkers(2000));

    const { runId } = await b.startFlow(flows.parent, null);
    await sideReached.promise;
    const child = await waitFor('A to exist', async () => (await childrenOf(db, runId))[0]);
    await waitFor('the parent to park on A', async () =>
      (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).status === 'Waiting' ? true : undefined,
    );
    const row = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 3 } });
    expect([row.status, row.attempts, row.claimed_by]).toEqual(['Running', 1, a.runtime.workerId]);

    // The cut: A's late write fails and is retried.
    proxy.cut();
    const refusedAtCut = proxy.state.refused;
    sideGate.open();
    await waitFor('A to retry through the cut', async () =>
      proxy.state.refused > refusedAtCut + 3 ? true : undefined,
    );

    // Past the step's reclaim deadline; B's pool starts; the child gets its signal.
    clock.advance(61_000);
    b.startWorkers();
    closers.push(() => b.stopWorkers(2000));
    await b.signal(child.id, 'go', 'ok');
    await waitFor('the parent to end', async () =>
      (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).finished_at ? true : undefined,
    );
    const afterB = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: row.id } });

    // A gets through again: its late write goes out.
    proxy.restore();
    const turnedAway = await lateOutcomeTurnedAway(db, runId);
    await a.stopWorkers(5000);
    await b.stopWorkers(5000);
    const rec = await recordOf(db, runId);
    const final = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: row.id } });
    expect({
      afterB: [afterB.status, afterB.attempts, afterB.claimed_by],
      final: [final.status, final.attempts],
      parent: [rec.run.status, rec.ends, rec.afterTheEnd],
      duplicates: rec.duplicateStepOutcomes,
      turnedAway: turnedAway.length,
      ranSide: ran.filter((n) => n === 'side').length,
      held: a.runtime.heldOutcomes.size,
    }).toEqual({
      afterB: ['Completed', 2, b.runtime.workerId],
      final: ['Completed', 2],
      parent: ['Completed', 1, []],
      duplicates: [],
      turnedAway: 1,
      ranSide: 2,
      held: 0,
    });
    console.log(`review27 two pools: anomalies ${JSON.stringify(await anomaliesOf(db, runId))}`);
  });
});
