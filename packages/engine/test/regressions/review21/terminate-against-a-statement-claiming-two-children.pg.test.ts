import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow } from '../../../src/index.ts';
import type { FusableDeps } from '../../../src/runtime/replay/fused-outcome.ts';
import { transitionInBatch } from '../../../src/runtime/run-statement-batches.ts';
import { listOpenChildren } from '../../../src/store/list-open-children.ts';
import type { TransitionResult } from '../../../src/store/step-transitions.ts';
import { activeRun } from '../../support/active-run.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { activeLones, loneClaims, settleAfterLones, stepClaim } from '../../support/round-items.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { bareEngine } from '../harness.ts';
import { recordOf } from '../review20/record.ts';
import { lockWaiters } from './lock-waiters.ts';

/**
 * Review 21. ADR 0089's terminate locks the parent, then each open 'propagate' child in the order
 * `listOpenChildren` returns them (no ORDER BY). A hot step-transitions statement carrying claims of
 * two of those children locks them in id order (ADR 0066). When the terminate's order is the
 * opposite (the higher id first), the two can close a cycle: the statement holds the lower child
 * and asks for the higher; the terminate holds the parent and the higher child and asks for the lower.
 *
 * Driven by progress: the lone claims fill the statements that may be out (round-items.ts), so the
 * two children's claims go as ONE statement; a connection of the test's own holds the lower child's
 * row so the statement waits there, the terminate takes the parent and the higher child and queues
 * on the lower one, and the holder commits.
 *
 * As first written (against ebae558) the cycle closed and PostgreSQL rolled one back. Since the
 * terminate locks the tree itself, deepest first and one depth in id order (lockOpenTree, ADR 0089's
 * amendment), it queues on the lower child as the statement does, holding nothing: no cycle.
 *
 * Designed: neither caller sees a deadlock; the parent and both children end Terminated once; nothing
 * is claimed or recorded after a child's end.
 */
const worker = 'review21-two-children-worker';
const flow = defineFlow({ name: 'review21-two-children', version: 1, run: async () => null });

describe('terminate against one statement claiming two of its children (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('neither caller sees the lock cycle; the tree ends Terminated and nothing follows', async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project');
    const e = bareEngine(db, { flows: [flow], actions: [] });
    const deps = e.runtime as FusableDeps;
    const lones = await activeLones(db, 'review21-two-children', worker);
    const parent = await activeRun(db, flow.name, worker);
    const [a, b] = await Promise.all([activeRun(db, flow.name, worker), activeRun(db, flow.name, worker)]);
    const [lo, hi] = a < b ? [a, b] : [b, a];
    // The children, as ctx.child leaves them (propagate), the higher id linked first.
    for (const [child, seq] of [
      [hi, 1],
      [lo, 2],
    ] as const)
      await db.prisma.$executeRaw`
        update sagaflow.flow_runs set parent_run_id = ${parent}::uuid, parent_sequence = ${seq}::int,
               parent_cancel_policy = 'propagate' where id = ${child}::uuid`;
    // Before the terminate locked the tree itself, it followed listOpenChildren's order, which had no
    // ORDER BY and gave [hi, lo] here. It is id order now, the order the tree's listing and the preview use.
    expect(await listOpenChildren(db.prisma, parent)).toEqual([lo, hi]);

    const held = await holdRuns(db.url, [lo]);
    const statement = settleAfterLones<[TransitionResult, TransitionResult]>(await loneClaims(deps, worker, lones), [
      transitionInBatch(deps, stepClaim(worker, lo, 1)),
      transitionInBatch(deps, stepClaim(worker, hi, 1)),
    ]);
    await waitForWaiters(db, held.pid, 1);
    const terminating = e.terminate(parent, { reason: 'review21: stop the parent' }).then(
      (r) => r,
      (err: { code?: string; message?: string }) => ({ error: err.code ?? err.message }),
    );
    await lockWaiters(db, 2);
    await held.commit();
    const [lonesDone, loClaim, hiClaim] = await statement;
    const terminated = await terminating;

    const [p, l, h] = await Promise.all([parent, lo, hi].map((id) => recordOf(db, id)));
    const claimed = (r: PromiseSettledResult<TransitionResult>) =>
      r.status === 'rejected'
        ? `rejected: ${(r.reason as { code?: string; message?: string }).code ?? String(r.reason)}`
        : r.value.row
          ? 'claimed'
          : 'not claimed';
    expect({
      lones: lonesDone.status,
      claims: [claimed(loClaim), claimed(hiClaim)].map((c) => c.startsWith('rejected')),
      terminated,
      runs: [p!.run.status, l!.run.status, h!.run.status],
      ends: [p!.ends, l!.ends, h!.ends],
      afterTheEnd: [p!.afterTheEnd, l!.afterTheEnd, h!.afterTheEnd],
    }).toEqual({
      lones: 'fulfilled',
      claims: [false, false],
      terminated: { terminated: true },
      runs: ['Terminated', 'Terminated', 'Terminated'],
      ends: [1, 1, 1],
      afterTheEnd: [[], [], []],
    });
    // A claim that went through committed before the children's ends; one that did not wrote nothing.
    for (const [claim, rec] of [
      [loClaim, l!],
      [hiClaim, h!],
    ] as const)
      expect(rec.steps.length).toBe(claimed(claim) === 'claimed' ? 1 : 0);
  });
});
