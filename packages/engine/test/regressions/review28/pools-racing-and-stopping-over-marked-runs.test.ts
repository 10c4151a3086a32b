import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { Engine } from '../../../src/create-engine.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { assertRunGuarantees } from './support/invariants.ts';
import { actions, effectsOf, otherFlow, twoSteps } from './support/flows.ts';
import { holdClaims } from './support/held-claims.ts';

/**
 * Attacks 2 and 4 with real pools (startWorkers): two pools on one database racing for the wakes of
 * Pending runs (each start's wake plus a kick and a queued re-dispatch); a pool whose claim marked runs
 * and that gives their wakes back (a start of its own took the slot while the claim was out), then
 * stops; a pool stopped right after such a claim. Every run completes with one outcome per step.
 */
const flows = [twoSteps, otherFlow];
const WAIT_MS = 60_000;

describe(`pools racing and stopping over runs their claims marked (${testDbKind()})`, () => {
  let db: Database;
  const clock = new TestClock();
  const pools: Engine[] = [];
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    for (const p of pools) await p.stopWorkers(2000).catch(() => undefined);
    await db.close();
  });
  const allEnded = (runIds: string[]) => {
    let open = '';
    return waitFor(
      () => `every run to end; open: ${open}`,
      async () => {
        const rows = await db.prisma.flowRun.findMany({
          where: { id: { in: runIds }, status: { in: ['Pending', 'Running', 'Waiting', 'Compensating'] } },
        });
        open = rows.map((r) => `${r.id} ${r.status} ${r.stuck_reason}`).join('; ');
        return rows.length === 0 ? true : undefined;
      },
      WAIT_MS,
    );
  };

  it('two pools race for the start wake, a kick and a re-dispatch of each Pending run: one outcome per step', async () => {
    const starter = bareEngine(db, { flows, actions, clock });
    const runIds: string[] = [];
    const tags: string[] = [];
    for (let i = 0; i < 24; i++) {
      const tag = `race-${i}`;
      const { runId } = await starter.startFlow(twoSteps, tag);
      await starter.kick(runId);
      await db.prisma.job.create({ data: { kind: 'wake-run', run_id: runId, available_at: clock.now() } });
      runIds.push(runId);
      tags.push(tag);
    }
    expect(await db.prisma.flowRun.count({ where: { id: { in: runIds }, status: 'Pending' } })).toBe(24);
    const a = bareEngine(db, { flows, actions, clock, config: { worker: { concurrency: 4 } } });
    const b = bareEngine(db, { flows, actions, clock, config: { worker: { concurrency: 4 } } });
    pools.push(a, b);
    a.startWorkers();
    b.startWorkers();
    await allEnded(runIds);
    await waitFor(
      'the queue to drain',
      async () => ((await db.prisma.job.count({ where: { run_id: { in: runIds } } })) === 0 ? true : undefined),
      WAIT_MS,
    );
    const claimedBy = { a: a.workerCounters()?.jobsClaimed, b: b.workerCounters()?.jobsClaimed };
    await a.stopWorkers(5000);
    await b.stopWorkers(5000);
    for (const [i, runId] of runIds.entries()) {
      const history = await assertRunGuarantees(db, runId, { effects: effectsOf(tags[i]!), expectTerminal: true });
      expect(history.at(-1), JSON.stringify(claimedBy)).toBe('run.completed');
    }
  }, 120_000);

  it('a claim that marked runs, whose wakes are given back because a start took the slot, then the pool stops: another pool completes them', async () => {
    const starter = bareEngine(db, { flows, actions, clock });
    const runIds: string[] = [];
    for (let i = 0; i < 3; i++) runIds.push((await starter.startFlow(twoSteps, `given-back-${i}`)).runId);
    const held = gate();
    const answered = gate();
    let holding = true;
    const heldDb = holdClaims(db, async () => {
      if (!holding) return;
      holding = false;
      answered.open();
      await held.promise;
    });
    // One slot, a long poll: the start's reservation is not refused as stale while the claim is held.
    const a = bareEngine(heldDb, {
      flows,
      actions,
      clock,
      config: { worker: { concurrency: 1, poll_interval_ms: 60_000 } },
    });
    pools.push(a);
    a.startWorkers();
    await answered.promise;
    const marked = await db.prisma.flowRun.count({ where: { id: { in: runIds }, status: 'Running' } });
    expect(marked).toBeGreaterThan(0);
    // A start in the pool's own process takes the one slot while the claim is out.
    const own = await a.startFlow(twoSteps, 'given-back-own');
    runIds.push(own.runId);
    held.open();
    await waitFor(
      'the claimed wakes to be given back',
      async () => ((a.workerCounters()?.jobsGivenBack ?? 0) > 0 ? true : undefined),
      WAIT_MS,
    );
    await a.stopWorkers(5000);
    // Every open run is visible: a wake due, or a stuck reason.
    for (const runId of runIds) await assertRunGuarantees(db, runId, {});
    const b = bareEngine(db, { flows, actions, clock });
    pools.push(b);
    b.startWorkers();
    await allEnded(runIds);
    await b.stopWorkers(5000);
    for (const [i, runId] of runIds.entries()) {
      const tag = i < 3 ? `given-back-${i}` : 'given-back-own';
      const history = await assertRunGuarantees(db, runId, { effects: effectsOf(tag), expectTerminal: true });
      expect(history.at(-1)).toBe('run.completed');
    }
  }, 120_000);

  it('a pool stopped while its claim that marked runs is out: the runs complete (here or on another pool), one outcome per step', async () => {
    const starter = bareEngine(db, { flows, actions, clock });
    const runIds: string[] = [];
    for (let i = 0; i < 4; i++) runIds.push((await starter.startFlow(twoSteps, `stopped-${i}`)).runId);
    const held = gate();
    const answered = gate();
    let holding = true;
    const heldDb = holdClaims(db, async () => {
      if (!holding) return;
      holding = false;
      answered.open();
      await held.promise;
    });
    const a = bareEngine(heldDb, { flows, actions, clock, config: { worker: { concurrency: 2 } } });
    pools.push(a);
    a.startWorkers();
    await answered.promise;
    expect(await db.prisma.flowRun.count({ where: { id: { in: runIds }, status: 'Running' } })).toBeGreaterThan(0);
    const stopping = a.stopWorkers(5000);
    held.open();
    await stopping;
    for (const runId of runIds) await assertRunGuarantees(db, runId);
    const b = bareEngine(db, { flows, actions, clock });
    pools.push(b);
    b.startWorkers();
    await allEnded(runIds);
    await b.stopWorkers(5000);
    for (const [i, runId] of runIds.entries()) {
      const history = await assertRunGuarantees(db, runId, {
        effects: effectsOf(`stopped-${i}`),
        expectTerminal: true,
      });
      expect(history.at(-1)).toBe('run.completed');
    }
  }, 120_000);
});
