import type { Database } from '../../../../src/db/database.ts';
import type { Engine } from '../../../../src/index.ts';
import { executeRun } from '../../../../src/runtime/execute-run.ts';
import { recordOf } from '../../review20/record.ts';

/** Every run of the tree under `rootId`, the root first, depth first. */
export async function treeIds(db: Database, rootId: string): Promise<{ id: string; depth: number }[]> {
  const out: { id: string; depth: number }[] = [{ id: rootId, depth: 0 }];
  const walk = async (id: string, depth: number) => {
    const kids = await db.prisma.flowRun.findMany({
      where: { parent_run_id: id },
      orderBy: [{ parent_sequence: 'asc' }, { id: 'asc' }],
    });
    for (const k of kids) {
      out.push({ id: k.id, depth });
      await walk(k.id, depth + 1);
    }
  };
  await walk(rootId, 1);
  return out;
}

/** Runs the due wakes of the whole tree, oldest first, each by deleting its job and replaying its run. */
export async function driveTree(db: Database, e: Engine, rootId: string, max = 80): Promise<number> {
  for (let i = 0; i < max; i++) {
    const ids = (await treeIds(db, rootId)).map((r) => r.id);
    const job = await db.prisma.job.findFirst({
      where: { run_id: { in: ids }, available_at: { lte: e.runtime.clock.now() } },
      orderBy: { id: 'asc' },
    });
    if (!job?.run_id) return i;
    await db.prisma.job.delete({ where: { id: job.id } });
    await executeRun(e.runtime, job.run_id);
  }
  throw new Error(`wakes kept coming after ${max} replays`);
}

/**
 * What each test judges of every run of the tree: its status, how many terminal events, what came after
 * the end, whether its cancellation was requested, its policy, and whether an open run can move (a job
 * of any time, or a stuck reason): nothing waits for ever.
 */
export async function judgeTree(db: Database, rootId: string) {
  const ids = await treeIds(db, rootId);
  return Promise.all(
    ids.map(async ({ id, depth }) => {
      const r = await recordOf(db, id);
      const row = await db.prisma.flowRun.findUniqueOrThrow({ where: { id } });
      const jobs = await db.prisma.job.count({ where: { run_id: id } });
      return {
        depth,
        policy: row.parent_cancel_policy,
        status: r.run.status,
        ends: r.ends,
        afterTheEnd: r.afterTheEnd,
        duplicateStepOutcomes: r.duplicateStepOutcomes,
        cancelRequested: row.cancel_requested_at !== null,
        stuck:
          row.finished_at === null && jobs === 0 && row.stuck_reason === null ? 'OPEN WITH NOTHING TO WAKE IT' : null,
      };
    }),
  );
}

/** The anomalies journaled for a run, as `code#sequence`. */
export async function anomaliesOf(db: Database, runId: string): Promise<string[]> {
  const rows = await db.prisma.anomalyLog.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
  return rows.map((a) => `${a.code}#${a.sequence ?? '-'}`);
}
