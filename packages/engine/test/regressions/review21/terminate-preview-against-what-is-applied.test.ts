import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { recordOf } from '../review20/record.ts';

/**
 * Review 21. The run.terminate repair's preview against what it applies, on a quiet tree: a root with
 * a 'propagate' child (itself with a 'propagate' grandchild mid-step) and an 'abandon' child mid-step.
 * Designed: the preview names the root, the propagate child and the grandchild as Terminated, and not
 * the abandon child; the applied result and the audit row say the same; exactly those runs end
 * Terminated, each once; the abandon child goes on and completes, and its finish does not write into
 * the Terminated root (nothing after the root's end). The same idempotency key sent again returns the
 * first result and changes nothing.
 */
describe(`run.terminate: preview, result, audit and record agree (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('names exactly the propagate tree, leaves the abandon child running', async () => {
    const gates = { g: { reached: gate(), release: gate() }, a: { reached: gate(), release: gate() } };
    const ran: string[] = [];
    const mk = (k: 'g' | 'a') =>
      defineAction({
        name: `review21-prev-work-${k}`,
        run: async () => {
          ran.push(k);
          gates[k].reached.open();
          await gates[k].release.promise;
          return k;
        },
      });
    const wg = mk('g');
    const wa = mk('a');
    const grandchild = defineFlow({
      name: 'review21-prev-grand',
      version: 1,
      run: async (ctx) => ctx.action(wg, null),
    });
    const child = defineFlow({
      name: 'review21-prev-child',
      version: 1,
      run: async (ctx) => ctx.child(grandchild, null),
    });
    const abandoned = defineFlow({
      name: 'review21-prev-abandon',
      version: 1,
      run: async (ctx) => ctx.action(wa, null),
    });
    const root = defineFlow({
      name: 'review21-prev-root',
      version: 1,
      run: async (ctx) =>
        // Both children started by the first replay (two waits at once; ctx.parallel takes actions only).
        Promise.all([ctx.child(child, null), ctx.child(abandoned, null, { cancellation: 'abandon' })]),
    });
    const e = bareEngine(db, { flows: [root, child, grandchild, abandoned], actions: [wg, wa] });
    const { runId } = await e.startFlow(root, null);
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    // The replay parks once the first child waits; the second start may still be committing then.
    const kids = await waitFor('both children to be started', async () => {
      const found = await db.prisma.flowRun.findMany({ where: { parent_run_id: runId } });
      return found.length === 2 ? found : undefined;
    });
    const c = kids.find((k) => k.flow_name === child.name)!;
    const a = kids.find((k) => k.flow_name === abandoned.name)!;
    expect(await executeRun(e.runtime, c.id)).toBe('parked');
    const g = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: c.id } });
    const liveG = executeRun(e.runtime, g.id);
    const liveA = executeRun(e.runtime, a.id);
    await gates.g.reached.promise;
    await gates.a.reached.promise;

    const name = (s: string) =>
      s.replace(runId, 'root').replace(c.id, 'child').replace(g.id, 'grandchild').replace(a.id, 'abandoned');
    const named = (ts: { subject: string; to: string }[]) =>
      ts
        .filter((t) => t.to === 'Terminated')
        .map((t) => name(t.subject).split(' ')[1]!)
        .sort();
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const cmd = {
      kind: 'run.terminate' as const,
      target: { runId },
      expected: { runStatus: run.status as 'Waiting' },
      actor: 'review21@example.test',
      reason: 'review21: preview then apply',
      idempotencyKey: `review21-prev-${runId}`,
    };
    const preview = await e.repairs.preview(cmd);
    const applied = await e.repairs.apply(cmd);
    const again = await e.repairs.apply(cmd);
    const audit = await db.prisma.repairCommand.findMany({ where: { idempotency_key: cmd.idempotencyKey } });
    const auditTransitions = (audit[0]?.result as { effects: { transitions: { subject: string; to: string }[] } })
      .effects.transitions;

    gates.g.release.open();
    gates.a.release.open();
    await liveG;
    expect(await liveA).toBe('finished');
    const [r, cr, gr, ar] = await Promise.all([runId, c.id, g.id, a.id].map((id) => recordOf(db, id)));
    const expectedTree = ['child', 'grandchild', 'root'];
    expect({
      preview: named(preview.effects.transitions),
      applied: [applied.status, named(applied.effects.transitions)],
      again: [again.status, again.replayed, again.id === applied.id],
      audit: [audit.length, named(auditTransitions)],
      runs: [r!, cr!, gr!, ar!].map((x) => [x.run.status, x.ends, x.afterTheEnd]),
    }).toEqual({
      preview: expectedTree,
      applied: ['applied', expectedTree],
      again: ['applied', true, true],
      audit: [1, expectedTree],
      runs: [
        ['Terminated', 1, []],
        ['Terminated', 1, []],
        ['Terminated', 1, []],
        ['Completed', 1, []],
      ],
    });
    expect(ran.sort()).toEqual(['a', 'g']);
  });
});
