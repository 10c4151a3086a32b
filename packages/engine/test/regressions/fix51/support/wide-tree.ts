import type { Database } from '../../../../src/db/database.ts';
import { defineFlow } from '../../../../src/definitions/define-flow.ts';
import type { Engine } from '../../../../src/index.ts';
import { executeRun } from '../../../../src/runtime/execute-run.ts';

/** A child that waits a day for its signal: open, with nothing left undone, until something ends it. */
export const waiter = defineFlow({
  name: 'fix51.waiter',
  version: 1,
  run: async (ctx, i: { k: number }) => {
    await ctx.awaitSignal('go', { timeoutSeconds: 86_400 });
    return { k: i.k };
  },
});

/** A root with one real child; the rest of its tree is copied from that child's row (set-based, below). */
export const root = defineFlow({
  name: 'fix51.root',
  version: 1,
  run: async (ctx) => ctx.child(waiter, { k: 0 }),
});

export const wideTreeFlows = [root, waiter];

/**
 * A root over `children` open 'propagate' children (and, with `grandchildren`, that many under each
 * child): the root and its first child run for real (the child waits for its signal), the others are
 * copies of the first child's row made by one INSERT each level, as a parent's `ctx.child` leaves
 * them (Waiting, 'propagate', the parent's step sequence). Running 2,000 flows would cost minutes on a
 * loaded machine; the terminate reads and writes the same rows either way.
 */
export async function buildWideTree(
  e: Engine,
  db: Database,
  shape: { children: number; grandchildren?: number },
): Promise<{ rootId: string; descendants: string[] }> {
  const { runId: rootId } = await e.startFlow(root, null);
  if ((await executeRun(e.runtime, rootId)) !== 'parked') throw new Error('the root did not park at its child');
  const first = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: rootId } });
  if ((await executeRun(e.runtime, first.id)) !== 'parked') throw new Error('the first child did not park');
  const copy = (template: string, parent: string, n: number, each: boolean) =>
    db.prisma.$executeRawUnsafe(`
      insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, status, input, parent_run_id, parent_sequence,
                                          parent_cancel_policy, created_at, updated_at, started_at)
      select gen_random_uuid(), t.flow_name, t.flow_version, t.status, t.input, ${each ? 'p.id' : `'${parent}'::uuid`},
             t.parent_sequence, t.parent_cancel_policy, now(), now(), now()
        from "sagaflow"."flow_runs" t
       cross join generate_series(1, ${n}) g
       ${each ? `join "sagaflow"."flow_runs" p on p.parent_run_id = '${parent}'::uuid` : ''}
       where t.id = '${template}'::uuid`);
  await copy(first.id, rootId, shape.children - 1, false);
  if (shape.grandchildren) await copy(first.id, rootId, shape.grandchildren, true);
  const descendants = await db.prisma.$queryRawUnsafe<{ id: string }[]>(`
    with recursive t (id) as (
      select id from "sagaflow"."flow_runs" where parent_run_id = '${rootId}'::uuid
      union all select c.id from "sagaflow"."flow_runs" c join t on c.parent_run_id = t.id)
    select id::text as id from t`);
  return { rootId, descendants: descendants.map((d) => d.id) };
}

/**
 * Each descendant of the tree as it ended: how many are Terminated with the reason a terminate gives it
 * (`parent <its parent> was terminated: <its parent's reason>`, the root's being the command's, on its error
 * and on its cancellation), how
 * many are still open, and how many `run.terminated` events each has.
 */
export async function treeAsEnded(db: Database, rootId: string, reason: string) {
  const rows = await db.prisma.$queryRawUnsafe<{ status: string; ok: boolean; events: number }[]>(
    `
    with recursive t (id, reason) as (
      select id, 'parent ' || $1 || ' was terminated: ' || $2 from "sagaflow"."flow_runs" where parent_run_id = $1::uuid
      union all
      select c.id, 'parent ' || t.id::text || ' was terminated: ' || t.reason
        from "sagaflow"."flow_runs" c join t on c.parent_run_id = t.id)
    select r.status,
           coalesce(r.error->>'message' = t.reason and r.cancel_reason = t.reason, false) as ok,
           (select count(*)::int from "sagaflow"."flow_events" e where e.run_id = r.id and e.type = 'run.terminated') as events
      from t join "sagaflow"."flow_runs" r on r.id = t.id`,
    rootId,
    reason,
  );
  const open = ['Pending', 'Running', 'Waiting', 'Compensating'];
  return {
    terminatedWithReason: rows.filter((r) => r.status === 'Terminated' && r.ok && r.events === 1).length,
    open: rows.filter((r) => open.includes(r.status)).length,
    other: rows.filter((r) => !open.includes(r.status) && !(r.status === 'Terminated' && r.ok && r.events === 1))
      .length,
  };
}
