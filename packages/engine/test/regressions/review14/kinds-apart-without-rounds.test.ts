import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInBatch } from '../../../src/api/start-in-batch.ts';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow } from '../../../src/index.ts';
import type { FusableDeps } from '../../../src/runtime/replay/fused-outcome.ts';
import { finishInBatch, sendsRounds, transitionInBatch } from '../../../src/runtime/run-statement-batches.ts';
import { activeRun } from '../../support/active-run.ts';
import { countStatements } from '../../support/count-statements.ts';
import { historyOf, readyToFinish, sentKinds, startOf, stepClaim } from '../../support/round-items.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { bareEngine } from '../harness.ts';

/**
 * Review 14 (ADR 0070): where a driver sends no rounds (PGlite, and PostgreSQL with
 * `statementRounds: false`), each kind keeps its own batcher as before ADR 0066: a start, a
 * transition and a finish waiting at one moment go as three statements, none in a round, each
 * writing what it writes alone.
 */
const worker = 'review14-apart';
const flow = defineFlow({ name: 'review14-apart', version: 1, run: async () => null });

describe('the kinds apart, without rounds', () => {
  let db: Database | undefined;
  beforeAll(async () => {
    db = await openTestDatabase({ statementRounds: false });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('a start, a transition and a finish waiting together go as statements of their own kinds', async () => {
    const direct = db!;
    expect('statements' in direct.driver && direct.driver.statements !== undefined).toBe(false);
    expect(sendsRounds(direct.driver)).toBe(false);
    const counted = countStatements(direct);
    const deps = bareEngine(counted.db, { flows: [flow], actions: [] }).runtime as FusableDeps;
    const [lone, x, y] = await Promise.all([
      activeRun(direct, 'apart-lone', worker),
      activeRun(direct, 'apart-x', worker),
      activeRun(direct, 'apart-y', worker),
    ]);
    const finish = await readyToFinish(direct, y, worker, { y: 1 });
    counted.sent.length = 0;
    const [first, started, moved, finished] = await Promise.all([
      transitionInBatch(deps, stepClaim(worker, lone, 1)),
      startInBatch(counted.db.driver, startOf('review14-apart', worker, 'apart-key')),
      transitionInBatch(deps, stepClaim(worker, x, 1)),
      finishInBatch(deps, finish),
    ]);
    expect(first).toMatchObject({ runOpen: true, row: { sequence: 1 } });
    expect(moved).toMatchObject({ runOpen: true, row: { sequence: 1, attempts: 1 } });
    expect(finished).toBe('Completed');
    expect(await historyOf(direct, started.runId)).toEqual(['run.started', 'run.running']);
    expect(
      sentKinds(counted.sent)
        .map(([kind, round]) => `${kind} ${round}`)
        .sort(),
    ).toEqual(['finishes null', 'starts null', 'transitions null', 'transitions null']);
  });
});
