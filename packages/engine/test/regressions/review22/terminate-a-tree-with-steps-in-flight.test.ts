import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { leftUndoneOf } from './support/left-undone.ts';

/**
 * Review 22. ADR 0091 on a tree: the root has a value step (ctx.now), a completed action with a
 * compensation, and a 'propagate' child (a step of kind 'child'); the child ran a parallel block whose
 * first action completed and whose second is held by its worker; an 'abandon' child has a step in
 * flight too. The terminate reaches the root and the propagate child, not the abandon child.
 *
 * Judged: each run's `left_undone` (error and event) is what its rows say (value and child steps not
 * listed); the abandon child is untouched; the preview's notes equal the applied ones; and the
 * preview, which names the child among what the command terminates, says what the child leaves in
 * flight ("The preview says it before the click", ADR 0091 decision 4).
 */
describe(`run.terminate of a tree with steps done and in flight (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  /** The tree, terminated by the run.terminate repair (preview, then apply), and each run's list. */
  async function terminatedTree() {
    const held = { c2: { reached: gate(), release: gate() }, ab: { reached: gate(), release: gate() } };
    const holding = (k: 'c2' | 'ab') => async () => {
      held[k].reached.open();
      await held[k].release.promise;
      return k;
    };
    const r1 = defineAction({ name: 'review22-tree-r1', run: async () => 'r1' });
    const undo = defineAction({ name: 'review22-tree-undo', run: async () => null });
    const c1 = defineAction({ name: 'review22-tree-c1', run: async () => 'c1' });
    const c2 = defineAction({ name: 'review22-tree-c2', run: holding('c2') });
    const ab = defineAction({ name: 'review22-tree-ab', run: holding('ab') });
    const child = defineFlow({
      name: 'review22-tree-child',
      version: 1,
      run: async (ctx) =>
        ctx.parallel([
          ctx.action(c1, null).compensateWith(undo, () => null),
          ctx.action(c2, null).compensateWith(undo, () => null),
        ]),
    });
    const abandoned = defineFlow({
      name: 'review22-tree-abandon',
      version: 1,
      run: async (ctx) => ctx.action(ab, null).run(),
    });
    const root = defineFlow({
      name: 'review22-tree-root',
      version: 1,
      run: async (ctx) => {
        ctx.now();
        await ctx
          .action(r1, null)
          .compensateWith(undo, () => null)
          .run();
        return Promise.all([ctx.child(child, null), ctx.child(abandoned, null, { cancellation: 'abandon' })]);
      },
    });
    const e = bareEngine(db, { flows: [root, child, abandoned], actions: [r1, undo, c1, c2, ab] });
    const { runId } = await e.startFlow(root, null);
    for (let i = 0; i < 5; i++) {
      if ((await db.prisma.flowRun.count({ where: { parent_run_id: runId } })) === 2) break;
      expect(await executeRun(e.runtime, runId)).toBe('parked');
    }
    const kids = await db.prisma.flowRun.findMany({ where: { parent_run_id: runId } });
    const c = kids.find((k) => k.flow_name === child.name)!;
    const a = kids.find((k) => k.flow_name === abandoned.name)!;
    const liveC = executeRun(e.runtime, c.id);
    const liveA = executeRun(e.runtime, a.id);
    await held.c2.reached.promise;
    await held.ab.reached.promise;
    await waitFor('c1 recorded', async () => {
      const row = await db.prisma.actionRun.findFirst({ where: { run_id: c.id, name: c1.name } });
      return row?.status === 'Completed' ? row : undefined;
    });

    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const cmd = {
      kind: 'run.terminate' as const,
      target: { runId },
      expected: { runStatus: run.status as 'Waiting' },
      actor: 'review22@example.test',
      reason: 'review22: stop the tree',
      idempotencyKey: `review22-tree-${runId}`,
    };
    const preview = await e.repairs.preview(cmd);
    const applied = await e.repairs.apply(cmd);
    held.c2.release.open();
    held.ab.release.open();
    await liveC;
    expect(await liveA).toBe('finished');

    const [lr, lc, la] = await Promise.all([runId, c.id, a.id].map((id) => leftUndoneOf(db, id)));
    return { preview, applied, lr: lr!, lc: lc!, la: la!, names: { r1: r1.name, c1: c1.name, c2: c2.name } };
  }

  it('each run the terminate reaches states its own list, as its rows have it', async () => {
    const { preview, applied, lr, lc, la, names } = await terminatedTree();
    const r1 = { name: names.r1 };
    const c1 = { name: names.c1 };
    const c2 = { name: names.c2 };
    // The root: its action listed; its value step and its child steps are not.
    expect(lr.status).toBe('Terminated');
    expect(lr.stated).toEqual({
      source: 'record',
      steps: [{ sequence: 2, name: r1.name, compensation: null }],
    });
    expect(lr.onEvent).toEqual(lr.stated);
    expect(lr.statedShape).toEqual(lr.fromRows);
    // The propagate child: c1 done, c2 in flight, its row still Running.
    expect(lc.status).toBe('Terminated');
    expect(lc.stated).toEqual({
      source: 'record',
      steps: [{ sequence: 1, name: c1.name, compensation: null }],
      in_flight: [{ kind: 'action', sequence: 2, name: c2.name }],
    });
    expect(lc.onEvent).toEqual(lc.stated);
    expect(lc.statedShape).toEqual(lc.fromRows);
    // The abandon child was not reached: it finished on its own.
    expect(la.status).toBe('Completed');
    expect(la.stated).toBeNull();

    // What the operator is shown equals what is applied.
    expect(applied.effects.notes).toEqual(preview.effects.notes);
  });

  it('the preview, which names the child as terminated, says what the child leaves undone and in flight', async () => {
    const { preview, names } = await terminatedTree();
    const childInFlight = preview.effects.notes.filter((note) => note.includes(names.c2));
    expect({ notes: preview.effects.notes, childInFlight: childInFlight.length }).toMatchObject({ childInFlight: 1 });
  });
});
