import { Prisma } from '../generated/prisma/client.ts';
import type { RawDb } from '../db/raw-db.ts';
import { inherited } from './inherited-reason.ts';
import { openRunByKey } from './keyed-status.ts';

/** Rounds of "list the tree, lock what is new" before giving up on a tree that keeps growing. */
const maxRounds = 10;

/**
 * An open run and its open 'propagate' descendants, each with its depth below the root (0), in one
 * recursive query, level by level in id order. Empty when the root is not open. What a terminate or
 * cancel locks ({@link lockOpenTree}, which orders its locks by depth itself). A path of ids per run, for a
 * depth-first order nothing used, cost time and memory with the square of a chain's depth (as review 65
 * found in the cancel's walk).
 */
export async function listOpenTree(db: RawDb, rootId: string): Promise<{ id: string; depth: number }[]> {
  return db.$queryRaw<{ id: string; depth: number }[]>(Prisma.sql`
    with recursive tree (id, depth) as (
      select r.id, 0 from "sagaflow"."flow_runs" r
       where r.id = ${rootId}::uuid and ${openRunByKey('r.status')}
      union all
      select c.id, t.depth + 1 from "sagaflow"."flow_runs" c join tree t on c.parent_run_id = t.id
       where c.parent_cancel_policy = 'propagate' and ${openRunByKey('c.status')}
    )
    select id::text as id, depth from tree order by depth, id`);
}

/**
 * Locks an open run and its open 'propagate' descendants FOR UPDATE, the deepest first and the root
 * last (ADR 0089), so a terminate of the tree waits for a finishing child instead of closing a cycle
 * with it: a child's finish locks the child, then its parent, and none of its ancestors is held yet
 * when the terminate waits for it. Rows of one depth go in id order, as the hot path's statements lock
 * runs. A run that finished meanwhile is skipped (its row is re-checked once its lock is free). The
 * tree is listed again once locked: a child committed between the listing and the lock of its parent
 * is locked in a further round (after its parent: the rare case a lock cycle is still possible, and
 * PostgreSQL breaks it, and an operator's transaction runs again, ADR 0074). Once every node is held,
 * no child can be added under it and none can finish before the caller's transaction ends.
 */
export async function lockOpenTree(db: RawDb, rootId: string): Promise<void> {
  const held = new Set<string>();
  for (let round = 0; round < maxRounds; round++) {
    const fresh = (await listOpenTree(db, rootId)).filter((n) => !held.has(n.id));
    if (fresh.length === 0) return;
    await db.$queryRaw<{ id: string }[]>(Prisma.sql`
      select r.id::text as id from "sagaflow"."flow_runs" r
        join unnest(${fresh.map((n) => n.id)}::uuid[], ${fresh.map((n) => n.depth)}::int[]) as t (id, depth)
          on r.id = t.id
       where ${openRunByKey('r.status')}
       order by t.depth desc, r.id
         for update of r`);
    // A run not locked had finished meanwhile: it is out of the next listing, and so is what is under it.
    for (const n of fresh) held.add(n.id);
  }
  throw new Error(`the open tree under run ${rootId} kept growing while it was being locked; try again`);
}

/**
 * The first `limit` open 'propagate' descendants of `rootId` still to terminate, parents before their
 * children (by depth, then id), each with the reason its terminate gives it (`parent <its parent> was
 * terminated: <the parent's reason>`, the root's being `reason`; a parent's quoted as a cancel quotes it,
 * at most its last 1,000 characters: review 66). The walk goes down through open runs, through runs
 * already Terminated (a terminate that stopped between its batches left their children open), and
 * through closed runs that were asked to cancel (the fence asked them; one closed at its window before
 * its batch came left its fenced children open: review 66), whatever the root's own status: what a
 * terminate of a wide tree ends one bounded transaction at a time (ADR 0125). The runs of `passOver`, and
 * everything under them, are left out: the monitor's walk passes over runs other sessions hold (ADR 0141).
 */
export async function listTreeToTerminate(
  db: RawDb,
  rootId: string,
  reason: string,
  limit: number,
  passOver: readonly string[] = [],
): Promise<{ id: string; parentId: string; depth: number; reason: string }[]> {
  const notPassedOver = passOver.length === 0 ? Prisma.empty : Prisma.sql`and c.id <> all(${[...passOver]}::uuid[])`;
  return db.$queryRaw<{ id: string; parentId: string; depth: number; reason: string }[]>(Prisma.sql`
    with recursive tree (id, parent, depth, reason, open) as (
      select c.id, c.parent_run_id, 1, 'parent ' || c.parent_run_id::text || ' was terminated: ' || ${reason}::text,
             ${openRunByKey('c.status')}
        from "sagaflow"."flow_runs" c
       where c.parent_run_id = ${rootId}::uuid and c.parent_cancel_policy = 'propagate'
         and (${openRunByKey('c.status')} or c.status = 'Terminated' or c.cancel_requested_at is not null)
         ${notPassedOver}
      union all
      select c.id, c.parent_run_id, t.depth + 1, 'parent ' || t.id::text || ' was terminated: ' || ${inherited('t.reason')},
             ${openRunByKey('c.status')}
        from "sagaflow"."flow_runs" c join tree t on c.parent_run_id = t.id
       where c.parent_cancel_policy = 'propagate'
         and (${openRunByKey('c.status')} or c.status = 'Terminated' or c.cancel_requested_at is not null)
         ${notPassedOver}
    )
    select id::text as id, parent::text as "parentId", depth, reason from tree where open
     order by depth, id limit ${limit}::int`);
}

/**
 * Locks those of `runs` still open FOR UPDATE, the deepest first (as {@link lockOpenTree} does), and
 * returns their ids. With `skipLocked`, a run another session holds is left out instead of waited for (the
 * monitor's walk, ADR 0140).
 */
export async function lockOpenRuns(
  db: RawDb,
  runs: readonly { id: string; depth: number }[],
  opts: { skipLocked?: boolean } = {},
): Promise<Set<string>> {
  const rows = await db.$queryRaw<{ id: string }[]>(Prisma.sql`
    select r.id::text as id from "sagaflow"."flow_runs" r
      join unnest(${runs.map((n) => n.id)}::uuid[], ${runs.map((n) => n.depth)}::int[]) as t (id, depth)
        on r.id = t.id
     where ${openRunByKey('r.status')}
     order by t.depth desc, r.id
       for update of r ${opts.skipLocked ? Prisma.sql`skip locked` : Prisma.empty}`);
  return new Set(rows.map((r) => r.id));
}
