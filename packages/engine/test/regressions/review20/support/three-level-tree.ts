import { expect } from 'vitest';
import type { Database } from '../../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../../src/index.ts';
import { executeRun } from '../../../../src/runtime/execute-run.ts';
import { bareEngine, gate } from '../../harness.ts';

let n = 0;

/**
 * ADR 0089's tests: a root waiting for its 'propagate' child (mid), waiting for its own (leaf), whose
 * one action is in flight, held at a gate (`release` lets it return). Flow and action names are
 * `prefix` and a counter, so each call has definitions of its own. `live` is the leaf's replay, not
 * awaited; `ran` lists the leaf's action calls.
 */
export async function startThreeLevelTree(db: Database, prefix: string) {
  n += 1;
  const reached = gate();
  const release = gate();
  const ran: string[] = [];
  const work = defineAction({
    name: `${prefix}-work-${n}`,
    run: async () => {
      ran.push('work');
      reached.open();
      await release.promise;
      return 'done';
    },
  });
  const leaf = defineFlow({ name: `${prefix}-leaf-${n}`, version: 1, run: async (ctx) => ctx.action(work, null) });
  const mid = defineFlow({ name: `${prefix}-mid-${n}`, version: 1, run: async (ctx) => ctx.child(leaf, null) });
  const root = defineFlow({ name: `${prefix}-root-${n}`, version: 1, run: async (ctx) => ctx.child(mid, null) });
  const e = bareEngine(db, { flows: [root, mid, leaf], actions: [work] });
  const { runId } = await e.startFlow(root, null);
  expect(await executeRun(e.runtime, runId)).toBe('parked');
  const midRun = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: runId } });
  expect(await executeRun(e.runtime, midRun.id)).toBe('parked');
  const leafRun = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: midRun.id } });
  const live = executeRun(e.runtime, leafRun.id);
  await reached.promise;
  return { e, ids: [runId, midRun.id, leafRun.id] as const, release, live, ran };
}
