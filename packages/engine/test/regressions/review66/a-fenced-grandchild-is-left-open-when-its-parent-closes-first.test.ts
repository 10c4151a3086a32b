import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow, type Json } from '../../../src/index.ts';
import { terminateRootAndFence } from '../../../src/api/terminate-run.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { lockOpenRun } from '../../../src/store/lock-open-run.ts';
import { lockOpenTree } from '../../../src/store/lock-open-tree.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { waiter } from '../../repairs/support/repair-fixtures.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/** G: waits 30 days for a signal. */
const leaf = defineFlow({
  name: 'r66-orphan-leaf',
  version: 1,
  run: async (ctx): Promise<Json> => ctx.awaitSignal('go', { timeoutSeconds: 30 * 86_400 }),
});
/** C: awaits its child G. */
const mid = defineFlow({
  name: 'r66-orphan-mid',
  version: 1,
  run: async (ctx): Promise<Json> => ctx.child(leaf, null, { cancellation: 'propagate' }),
});
/** P: awaits its child C. */
const top = defineFlow({
  name: 'r66-orphan-top',
  version: 1,
  run: async (ctx): Promise<Json> => ctx.child(mid, null, { cancellation: 'propagate' }),
});

/**
 * Review 66, attacking the terminate's fence and its batches (ADR 0125: "Issued again after a stop between
 * batches, the terminate finishes the rest"; ADR 0136's second addendum: "no descendant of a terminated run runs
 * its code again").
 *
 * P → C → G, all 'propagate', C awaiting G, G awaiting a signal (30 days). P's terminate makes its first commit
 * (P Terminated; C and G fenced: windows closed, no event, no wake) and stops there, as a crash or a lost
 * connection between batches leaves it. C is then woken (an operator's kick here; any wake of C does the same, as
 * does its own batch coming after a replay of C in a wide tree) and its replay closes it `Cancelled`
 * (CleanupWindowClosed). C's end asks its open children to cancel, but G is already asked (by the fence), so G
 * gets nothing: no event, no wake. The terminate, issued again, walks the tree only through open and Terminated
 * runs (`listTreeToTerminate`), so it stops at the Cancelled C and never reaches G.
 *
 * Seen on the base: G stays `Waiting`, its window closed, no wake queued before its 30-day signal timeout, no
 * stuck reason, after the terminate was issued again (`{ terminated: false }`). Expected: the second terminate
 * ends G (`Terminated`), as it ends every other descendant the fence left open.
 *
 * The second test needs no stop: P also has 100 children whose ids sort before C's, so the terminate's first batch
 * (100 runs, by depth then id) ends them and C and G come in the second. C is replayed between the two batches (a
 * `run.finished` listener, awaited by the terminate after the first batch's commit, stands for a worker woken for C
 * at that moment) and ends `Cancelled`. The second batch's walk no longer reaches G: the terminate answers
 * `{ terminated: true }` with G still `Waiting`.
 */
describe(`a fenced grandchild is finished by the terminate issued again (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  beforeEach(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({ db, flows: [top, mid, leaf, waiter], actions: [] });
  });
  afterEach(async () => {
    await t?.close();
    await db?.close();
  });

  it('G, fenced under a C that closed on its own, is terminated by the second terminate', async () => {
    const { runId: p } = await t.engine.startFlow(top, null);
    t.engine.startWorkers();
    const { c, g } = await waitFor('G to wait for its signal', async () => {
      const cRow = await db.prisma.flowRun.findFirst({ where: { parent_run_id: p } });
      const gRow = cRow && (await db.prisma.flowRun.findFirst({ where: { parent_run_id: cRow.id } }));
      return cRow?.status === 'Waiting' && gRow?.status === 'Waiting' && gRow.waiting_for?.includes('go')
        ? { c: cRow.id, g: gRow.id }
        : undefined;
    });
    await t.engine.stopWorkers();

    // The terminate's first commit, as terminateRun makes it, and no batch after it.
    t.clock.advance(1000);
    const fenced = await db.prisma.$transaction(async (tx) => {
      await lockOpenTree(tx, p);
      if (!(await lockOpenRun(tx, p, 'update'))) throw new Error('P not open');
      return (await terminateRootAndFence(tx, p, 'stopped by ops', t.clock.now())).fenced;
    });
    expect(fenced).toBe(2);

    // C is woken (a kick) and closes at its closed window.
    await t.engine.kick(c);
    t.engine.startWorkers();
    await waitFor('C to close', async () => {
      const row = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: c } });
      return row.status === 'Cancelled' || row.status === 'Terminated' ? true : undefined;
    });
    await t.engine.stopWorkers();

    // The terminate issued again, to finish what the first one left.
    const again = await t.engine.terminate(p, { reason: 'stopped by ops' });
    const gRow = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: g } });
    const cRow = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: c } });
    expect({ c: cRow.status, again, g: gRow.status }).toEqual({
      c: 'Cancelled',
      again: { terminated: true },
      g: 'Terminated',
    });
  }, 30_000);

  it('a terminate that runs all its batches leaves G open when C closes between two of them', async () => {
    const { runId: p } = await t.engine.startFlow(top, null);
    t.engine.startWorkers();
    const { c, g } = await waitFor('G to wait for its signal', async () => {
      const cRow = await db.prisma.flowRun.findFirst({ where: { parent_run_id: p } });
      const gRow = cRow && (await db.prisma.flowRun.findFirst({ where: { parent_run_id: cRow.id } }));
      return cRow?.status === 'Waiting' && gRow?.status === 'Waiting' && gRow.waiting_for?.includes('go')
        ? { c: cRow.id, g: gRow.id }
        : undefined;
    });
    await t.engine.stopWorkers();
    // 100 siblings of C whose ids sort first: the terminate's first batch (100 runs, by depth then id) is theirs,
    // and C and G come in the second.
    await db.prisma.$executeRaw`
      insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, status, input, parent_run_id, parent_sequence, parent_cancel_policy)
      select ('00000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, ${waiter.name}, 1, 'Waiting', '{}'::jsonb,
             ${p}::uuid, 100 + n, 'propagate'
        from generate_series(1, 100) n`;
    const siblings = new Set(
      (await db.prisma.flowRun.findMany({ where: { parent_run_id: p, id: { not: c } }, select: { id: true } })).map(
        (r) => r.id,
      ),
    );
    t.clock.advance(1000);
    // Between two batches (after the first one's commit), C is replayed, as a worker woken for it would: its
    // window is closed, so it ends Cancelled.
    let replayed: string | null = null;
    t.engine.events.on('run.finished', async (e) => {
      if (replayed === null && siblings.has(e.runId)) replayed = await executeRun(t.engine.runtime, c);
    });

    const answer = await t.engine.terminate(p, { reason: 'stopped by ops' });
    const [cRow, gRow] = await Promise.all(
      [c, g].map((id) => db.prisma.flowRun.findUniqueOrThrow({ where: { id }, select: { status: true } })),
    );
    const siblingsTerminated = await db.prisma.flowRun.count({
      where: { id: { in: [...siblings] }, status: 'Terminated' },
    });
    expect({ answer, replayed, siblingsTerminated, c: cRow!.status, g: gRow!.status }).toEqual({
      answer: { terminated: true },
      replayed: 'finished',
      siblingsTerminated: 100,
      c: 'Cancelled',
      g: 'Terminated',
    });
  }, 30_000);
});
