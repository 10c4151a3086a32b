import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { bareEngine, gate } from '../harness.ts';
import { recordOf } from '../review20/record.ts';
import { lockWaiters } from './lock-waiters.ts';

/**
 * Review 21. The operator terminates a parent (the run.terminate repair, ADR 0089: the parent, then
 * its open 'propagate' child, in one transaction) while another operator sends run.cancel or
 * run.expire to the child itself (the child mid-step, its step 1 Running, with a compensation
 * registered). Both wait on the child's row, held by a connection of the test's own until
 * pg_stat_activity shows both waiting; then it commits. Both queue orders.
 *
 * Designed: the parent and the child end Terminated (terminate closes an open run whatever it was
 * winding down to), each once, and nothing follows either end; no compensation runs afterwards; the
 * parent's repair is applied; the child's command is applied (when it went first) or turned away
 * with a reason, and audited once.
 */
describe('terminate the parent against a cancel or expiry of the child (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  let n = 0;
  async function parentWithChildMidStep() {
    n += 1;
    const reached = gate();
    const release = gate();
    const ran: string[] = [];
    const work = defineAction({
      name: `review21-pcmd-work-${n}`,
      run: async () => {
        ran.push('work');
        reached.open();
        await release.promise;
        return 'w';
      },
    });
    const undo = defineAction({ name: `review21-pcmd-undo-${n}`, run: async () => (ran.push('undo'), null) });
    const child = defineFlow({
      name: `review21-pcmd-child-${n}`,
      version: 1,
      run: async (ctx) => ctx.action(work, null).compensateWith(undo, () => null),
    });
    const parent = defineFlow({
      name: `review21-pcmd-parent-${n}`,
      version: 1,
      run: async (ctx) => ctx.child(child, null),
    });
    const e = bareEngine(db, { flows: [parent, child], actions: [work, undo] });
    const { runId } = await e.startFlow(parent, null);
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    const c = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: runId } });
    const live = executeRun(e.runtime, c.id);
    await reached.promise;
    return { e, parentId: runId, childId: c.id, release, live, ran };
  }

  const send = async (e: Engine, kind: 'run.terminate' | 'run.cancel' | 'run.expire', runId: string) => {
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    return e.repairs
      .apply({
        kind,
        target: { runId },
        expected: { runStatus: run.status as 'Running' },
        actor: 'review21@example.test',
        reason: `review21: ${kind}`,
        idempotencyKey: `review21-pcmd-${kind}-${runId}`,
      })
      .then(
        (r) => ({ status: r.status, blockers: [] as string[] }),
        (err: { code?: string; message?: string; details?: { blockers?: string[] } }) => ({
          status: err.code ?? 'thrown',
          blockers: err.details?.blockers ?? [err.message ?? '?'],
        }),
      );
  };

  for (const kind of ['run.cancel', 'run.expire'] as const)
    for (const first of ['terminate', kind] as const)
      it(`terminate(parent) against ${kind}(child), ${first} queued first`, async () => {
        const { e, parentId, childId, release, live, ran } = await parentWithChildMidStep();
        const holder = await holdRuns(db.url!, [childId]);
        let onParent: ReturnType<typeof send>;
        let onChild: ReturnType<typeof send>;
        if (first === 'terminate') {
          onParent = send(e, 'run.terminate', parentId);
          await waitForWaiters(db, holder.pid, 1);
          onChild = send(e, kind, childId);
        } else {
          onChild = send(e, kind, childId);
          await waitForWaiters(db, holder.pid, 1);
          onParent = send(e, 'run.terminate', parentId);
        }
        await lockWaiters(db, 2);
        await holder.commit();
        const [parentResult, childResult] = await Promise.all([onParent, onChild]);
        release.open();
        await live;
        // Whatever wakes are due now: a finished run's do nothing.
        for (let i = 0; i < 3; i++) await executeRun(e.runtime, childId);

        const [p, c] = await Promise.all([recordOf(db, parentId), recordOf(db, childId)]);
        expect({
          parent: [p.run.status, p.ends, p.afterTheEnd, p.audits],
          child: [c.run.status, c.run.open, c.ends, c.afterTheEnd],
          parentResult,
          compensations: c.compensations.filter((x) => x[1] === 'Completed'),
          undone: ran.filter((r) => r === 'undo'),
        }).toEqual({
          parent: ['Terminated', 1, [], [['run.terminate', 'applied']]],
          child: ['Terminated', false, 1, []],
          parentResult: { status: 'applied', blockers: [] },
          compensations: [],
          undone: [],
        });
        if (childResult.status === 'applied') expect(c.audits).toEqual([[kind, 'applied']]);
        else {
          expect(['repair_conflict', 'repair_refused']).toContain(childResult.status);
          expect(childResult.blockers.length).toBeGreaterThan(0);
          expect(c.audits.map((a) => a[1])).toEqual([expect.stringMatching(/^(conflict|refused)$/)]);
        }
        if (first === kind) expect(childResult.status).toBe('applied');
      });
});
