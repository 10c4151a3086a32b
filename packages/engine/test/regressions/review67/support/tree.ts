import { randomUUID } from 'node:crypto';
import { terminateRootAndFence } from '../../../../src/api/terminate-run.ts';
import type { Database } from '../../../../src/db/database.ts';
import { defineFlow, type Json } from '../../../../src/index.ts';
import { lockOpenRun } from '../../../../src/store/lock-open-run.ts';
import { lockOpenTree } from '../../../../src/store/lock-open-tree.ts';
import type { TestEngine } from '../../../../src/testing/create-test-engine.ts';
import { runMonitorPass } from '../../../../src/worker/start-monitor.ts';

/** The flow every seeded row names: waits a month for a signal (never replayed by these tests unless said). */
export const parked = defineFlow({
  name: 'r67-parked',
  version: 1,
  run: async (ctx): Promise<Json> => ctx.awaitSignal('go', { timeoutSeconds: 30 * 86_400 }),
});

/**
 * Inserts one open run as a parent's `ctx.child` leaves it (Waiting, the parent's step sequence), or a top-level
 * run without `parent`. Returns its id.
 */
export async function insertRun(
  db: Database,
  opts: { parent?: string | null; seq?: number; policy?: 'propagate' | 'abandon'; status?: string } = {},
): Promise<string> {
  const id = randomUUID();
  await db.prisma.$executeRaw`
    insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, status, input, parent_run_id, parent_sequence,
                                        parent_cancel_policy, created_at, updated_at, started_at)
    values (${id}::uuid, ${parked.name}, 1, ${opts.status ?? 'Waiting'}, 'null'::jsonb, ${opts.parent ?? null}::uuid,
            ${opts.parent ? (opts.seq ?? 1) : null}::int, ${opts.parent ? (opts.policy ?? 'propagate') : 'propagate'},
            now(), now(), now())`;
  return id;
}

/** The terminate's first commit (root Terminated, its open tree fenced), as terminateRun makes it, and no batch after it. */
export async function fenceOnly(t: TestEngine, db: Database, root: string, reason: string): Promise<number> {
  return db.prisma.$transaction(
    async (tx) => {
      await lockOpenTree(tx, root);
      if (!(await lockOpenRun(tx, root, 'update'))) throw new Error('root not open');
      return (await terminateRootAndFence(tx, root, reason, t.clock.now())).fenced;
    },
    { timeout: 60_000, maxWait: 10_000 },
  );
}

/** One monitor pass (the lease taken and released); the terminate finisher's count. */
export async function pass(t: TestEngine): Promise<number | null> {
  const r = await runMonitorPass(t.engine.runtime, { doctor: false, ttlSeconds: 60, release: true });
  if (!r.swept) throw new Error(`the monitor did not sweep: ${r.reason}`);
  return r.terminates?.terminated ?? null;
}

/** Each run as it stands: status, error message, and the finished_by of each of its run.terminated events. */
export async function states(db: Database, ids: string[]) {
  const out: Record<string, { status: string; message: unknown; finishedBy: unknown[] }> = {};
  for (const id of ids) {
    const row = await db.prisma.flowRun.findUniqueOrThrow({ where: { id } });
    const events = await db.prisma.flowEvent.findMany({ where: { run_id: id, type: 'run.terminated' } });
    out[id] = {
      status: row.status,
      message: (row.error as { message?: unknown } | null)?.message ?? null,
      finishedBy: events.map((e) => (e.data as { finished_by?: unknown }).finished_by ?? null),
    };
  }
  return out;
}

/** Only the statuses, in the order given. */
export const statuses = async (db: Database, ids: string[]) =>
  Object.values(await states(db, ids)).map((s) => s.status);
