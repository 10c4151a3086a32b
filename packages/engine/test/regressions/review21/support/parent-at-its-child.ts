import type { Database } from '../../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../../src/index.ts';
import { executeRun } from '../../../../src/runtime/execute-run.ts';
import { bareEngine, gate } from '../../harness.ts';
import { recordOf } from '../../review20/record.ts';

let n = 0;

/**
 * Review 21. A parent whose replay is in its code, between its start and a `ctx.child` (a gate), with
 * an engine of its own on `db`: what the terminate-while-the-parent-starts-a-child tests race.
 */
export async function parentAtItsChild(db: Database) {
  n += 1;
  const reached = gate();
  const release = gate();
  const work = defineAction({ name: `review21-pc-work-${n}`, run: async () => 'w' });
  const child = defineFlow({ name: `review21-pc-child-${n}`, version: 1, run: async (ctx) => ctx.action(work, null) });
  const parent = defineFlow({
    name: `review21-pc-parent-${n}`,
    version: 1,
    run: async (ctx) => {
      reached.open();
      await release.promise;
      return ctx.child(child, null);
    },
  });
  const e = bareEngine(db, { flows: [parent, child], actions: [work] });
  const { runId } = await e.startFlow(parent, null);
  const live = executeRun(e.runtime, runId);
  await reached.promise;
  return { e, runId, release, live };
}

/** The parent's end, its children's (status, open, ends, after the end), their jobs and `child.started` events. */
export async function judgeTree(db: Database, runId: string) {
  const children = await db.prisma.flowRun.findMany({ where: { parent_run_id: runId } });
  const p = await recordOf(db, runId);
  const cs = await Promise.all(children.map((c) => recordOf(db, c.id)));
  return {
    parent: [p.run.status, p.ends, p.afterTheEnd],
    children: cs.map((c) => [c.run.status, c.run.open, c.ends, c.afterTheEnd]),
    childJobs: await db.prisma.job.count({ where: { run_id: { in: children.map((c) => c.id) } } }),
    childStarted: p.names.filter((x) => x.startsWith('child.started')).length,
  };
}
