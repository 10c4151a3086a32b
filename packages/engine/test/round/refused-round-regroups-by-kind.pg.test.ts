import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { startInBatch } from '../../src/api/start-in-batch.ts';
import { defineFlow } from '../../src/index.ts';
import type { FusableDeps } from '../../src/runtime/replay/fused-outcome.ts';
import { transitionInBatch } from '../../src/runtime/run-statement-batches.ts';
import { activeRun } from '../support/active-run.ts';
import { countStatements } from '../support/count-statements.ts';
import { historyOf, sentKinds, startOf, stepClaim, turnEnd } from '../support/round-items.ts';
import { openTestDatabase } from '../support/test-database.ts';
import { bareEngine } from '../regressions/harness.ts';

/**
 * ADR 0066, addendum: a round the server refused wrote nothing, and its items go again in its slot.
 * One kind's refusal (a start whose business key is taken: an idempotent caller's retry, an ordinary
 * event) must not send the other kinds' items one by one: each kind goes again as its own set-based
 * statement, and only a kind refused again goes item by item.
 */
const worker = 'regroup-worker';
const flow = defineFlow({ name: 'regroup-rounds', version: 1, run: async () => null });

describe('a refused round goes again kind by kind (PostgreSQL)', () => {
  let db: Database | undefined;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  it("a taken business key refuses its round; the round's transitions then go as one statement, the start alone", async () => {
    const counted = countStatements(db!);
    const deps = bareEngine(counted.db, { flows: [flow], actions: [] }).runtime as FusableDeps;
    const runs = await Promise.all(['lone', 'a', 'b', 'x1', 'x2'].map((n) => activeRun(db!, `regroup-${n}`, worker)));
    const [lone, a, b, x1, x2] = runs as [string, string, string, string, string];
    const taken = await startInBatch(db!.driver, startOf('regroup-rounds', worker, 'regroup-key'));
    counted.sent.length = 0;
    // The lone transition goes at once; a's and b's go together beside it at the end of their turn
    // (ADR 0076, 0083); the start and x1's and x2's transitions, submitted after, wait for one of those
    // two and then go as one round.
    const first = [
      transitionInBatch(deps, stepClaim(worker, lone, 1)),
      transitionInBatch(deps, stepClaim(worker, a, 1)),
      transitionInBatch(deps, stepClaim(worker, b, 1)),
    ];
    await turnEnd();
    const [, , , started, moved1, moved2] = await Promise.allSettled([
      ...first,
      startInBatch(counted.db.driver, startOf('regroup-rounds', worker, 'regroup-key')),
      transitionInBatch(deps, stepClaim(worker, x1, 1)),
      transitionInBatch(deps, stepClaim(worker, x2, 1)),
    ]);
    expect(started).toMatchObject({ status: 'rejected', reason: { code: '23505' } });
    for (const moved of [moved1, moved2])
      expect(moved).toMatchObject({ status: 'fulfilled', value: { runOpen: true, row: { sequence: 1, attempts: 1 } } });

    const sent = sentKinds(counted.sent);
    expect(sent.slice(0, 2)).toEqual([
      ['transitions', null],
      ['transitions', null],
    ]);
    expect(sent.slice(2, 4)).toEqual([
      ['starts', 1],
      ['transitions', 1],
    ]);
    // After the refusal: the start alone (refused again, as alone), x1's and x2's transitions as ONE
    // statement carrying both runs (before this addendum: each alone, three statements).
    const after = counted.sent.slice(4);
    expect(
      sentKinds(after)
        .map(([kind, round]) => `${kind} ${round}`)
        .sort(),
    ).toEqual(['starts null', 'transitions null']);
    const again = after.find((s) => s.text.includes('sagaflow: step transitions'))!;
    expect(again.values[0]).toEqual(expect.arrayContaining([x1, x2]));

    // Nothing of the refused round stayed, and each item was written once.
    expect(await db!.prisma.flowRun.count({ where: { business_key: 'regroup-key' } })).toBe(1);
    expect((await db!.prisma.flowRun.findFirstOrThrow({ where: { business_key: 'regroup-key' } })).id).toBe(
      taken.runId,
    );
    for (const run of [x1, x2]) {
      expect(await historyOf(db!, run)).toEqual(['run.started', 'run.running', 'action.started#1']);
      expect(await db!.prisma.actionRun.count({ where: { run_id: run } })).toBe(1);
    }
  });
});
