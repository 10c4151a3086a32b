import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { finishedByMonitor } from '../../../src/api/sweep-unfinished-terminates.ts';
import { terminateDescendants } from '../../../src/api/terminate-run.ts';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { fenceOnly, insertRun, parked, pass } from './support/tree.ts';

/** A reason of 1,000 characters (the default limit), its cause at the start: quoted to its end at depth. */
const reason = `INC-9: ${'y'.repeat(993)}`;
const depth = 250;

/**
 * Review 67, HELD: ADR 0140 over a deep chain cut after a batch, with links its replays closed (review 66's D2 at
 * several depths). Two identical chains R → L1 → … → L250, all 'propagate'. Each is terminated: its first commit,
 * then its batches, stopped (a throw after the first batch's commit, as a SIGKILL there leaves it) once L1–L100
 * are Terminated. In each, L120 and L200 (fenced) are then replayed and close `Cancelled` at their closed
 * windows. The reference chain's terminate is sent again (ADR 0126); the other's is left to the monitor, past the
 * grace. Each run ends once, and each chain's runs carry the same reasons depth for depth (ids aside); the
 * monitor's carry `finished_by`.
 */
describe(`held: a deep chain cut after a batch, with closed links, ends as the batches would (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  beforeEach(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({
      db,
      flows: [parked],
      actions: [],
      config: { monitor: { unfinished_terminate_after_seconds: 60 } },
    });
  });
  afterEach(async () => {
    await t?.close();
    await db?.close();
  });

  async function chain(): Promise<string[]> {
    const ids = [await insertRun(db)];
    for (let i = 1; i <= depth; i++) ids.push(await insertRun(db, { parent: ids[i - 1]!, seq: 1 }));
    return ids;
  }

  async function cutAfterFirstBatch(ids: string[]) {
    expect(await fenceOnly(t, db, ids[0]!, reason)).toBe(depth);
    const stop = new Error('stopped after the first batch');
    await expect(
      terminateDescendants(t.engine.runtime, ids[0]!, reason, () => {
        throw stop;
      }),
    ).rejects.toBe(stop);
    for (const k of [120, 200]) await executeRun(t.engine.runtime, ids[k]!);
  }

  /** Per depth: status, the reason with the ids in it replaced by their depth, and the terminated events' finished_by. */
  async function asEnded(ids: string[]) {
    const depthOf = new Map(ids.map((id, i) => [id, i]));
    const rows = await db.prisma.$queryRaw<
      { id: string; status: string; message: string | null; ends: number; by: (string | null)[] }[]
    >`
      select r.id::text as id, r.status, coalesce(r.error->>'message', r.cancel_reason) as message,
             (select count(*)::int from "sagaflow"."flow_events" e where e.run_id = r.id
                and e.type in ('run.terminated', 'run.cancelled')) as ends,
             array(select e.data->>'finished_by' from "sagaflow"."flow_events" e
                    where e.run_id = r.id and e.type = 'run.terminated') as by
        from "sagaflow"."flow_runs" r where r.id = any(${ids}::uuid[])`;
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.slice(1).map((id) => {
      const r = byId.get(id)!;
      return {
        status: r.status,
        ends: r.ends,
        message: (r.message ?? '').replace(
          /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g,
          (m) => `<L${depthOf.get(m)}>`,
        ),
        by: r.by,
      };
    });
  }

  it('the monitor ends L101–L250 (but the two closed links) as the terminate sent again does', async () => {
    const ref = await chain();
    const mine = await chain();
    t.clock.advance(1000);
    await cutAfterFirstBatch(ref);
    await cutAfterFirstBatch(mine);

    expect(await t.engine.terminate(ref[0]!, { reason })).toEqual({ terminated: true });
    t.clock.advance(65_000);
    let ended = 0;
    for (let n = await pass(t); n; n = await pass(t)) ended += n;
    expect(ended).toBe(depth - 100 - 2);

    const a = await asEnded(ref);
    const b = await asEnded(mine);
    expect(b.map((r) => r.status)).toEqual(a.map((r) => r.status));
    expect(b.map((r) => r.message)).toEqual(a.map((r) => r.message));
    expect(b.every((r) => r.ends === 1)).toBe(true);
    expect(b.filter((r) => r.by[0] === finishedByMonitor).length).toBe(depth - 100 - 2);
    expect(b[119]!.status).toBe('Cancelled');
    expect(b[249]!.message).toMatch(/^parent <L249> was terminated: …/);
    expect(b.every((r) => r.message.length <= 1100)).toBe(true);
  });
});
