import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { Engine } from '../../../src/create-engine.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine } from '../harness.ts';
import { assertRunGuarantees } from './support/invariants.ts';
import { actions, effectsOf, otherFlow, twoSteps } from './support/flows.ts';

/**
 * Attacks 1 and 2 together, with real pools: Pending runs started by an engine with no pool, two
 * pools claiming their wakes (plus a kick each), while a third engine terminates, cancels or kicks
 * each run as soon as it has seen it (Pending or marked Running by a claim, whichever comes first).
 * Every run ends once; a terminated one had no action claimed after the terminate committed (its
 * side effects are exactly its recorded attempts, nothing after its end); a cancelled one ends
 * Cancelled; one outcome per step, at most one run.running.
 */
const flows = [twoSteps, otherFlow];
const WAIT_MS = 60_000;
const N = 18;

describe(`two pools and an operator racing over Pending runs (${testDbKind()})`, () => {
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

  it('every command that committed is honoured, and each run ends once', async () => {
    const starter = bareEngine(db, { flows, actions, clock });
    const runs: { runId: string; tag: string; command: 'terminate' | 'cancel' | 'kick' }[] = [];
    for (let i = 0; i < N; i++) {
      const tag = `chaos-${i}`;
      const { runId } = await starter.startFlow(twoSteps, tag);
      await starter.kick(runId);
      runs.push({ runId, tag, command: (['terminate', 'cancel', 'kick'] as const)[i % 3]! });
    }
    const a = bareEngine(db, { flows, actions, clock, config: { worker: { concurrency: 3 } } });
    const b = bareEngine(db, { flows, actions, clock, config: { worker: { concurrency: 3 } } });
    pools.push(a, b);
    a.startWorkers();
    b.startWorkers();
    const results = await Promise.all(
      runs.map(async ({ runId, command }) => {
        if (command === 'terminate') return (await starter.terminate(runId, { reason: 'chaos' })).terminated;
        if (command === 'cancel')
          return (await starter.cancel(runId, { reason: 'chaos', cleanupSeconds: 3600 })).requested;
        return (await starter.kick(runId)).kicked;
      }),
    );
    let open = '';
    await waitFor(
      () => `every run to end: ${open}`,
      async () => {
        const rows = await db.prisma.flowRun.findMany({
          where: {
            id: { in: runs.map((r) => r.runId) },
            status: { in: ['Pending', 'Running', 'Waiting', 'Compensating'] },
          },
        });
        open = rows.map((r) => `${r.id} ${r.status} ${r.stuck_reason}`).join('; ');
        return rows.length === 0 ? true : undefined;
      },
      WAIT_MS,
    );
    await waitFor(
      'the queue to hold only the cancellations’ deadline wakes',
      async () => {
        const due = await db.prisma.job.count({
          where: { run_id: { in: runs.map((r) => r.runId) }, available_at: { lte: clock.now() } },
        });
        return due === 0 ? true : undefined;
      },
      WAIT_MS,
    );
    await a.stopWorkers(5000);
    await b.stopWorkers(5000);
    for (const [i, { runId, tag, command }] of runs.entries()) {
      const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      const history = await assertRunGuarantees(db, runId, { effects: effectsOf(tag), expectTerminal: true });
      if (command === 'terminate' && results[i]) expect(run.status, history.join(', ')).toBe('Terminated');
      if (command === 'cancel' && results[i]) expect(run.status, history.join(', ')).toBe('Cancelled');
      if (command === 'kick' || !results[i]) expect(run.status, history.join(', ')).toBe('Completed');
    }
  }, 120_000);
});
