import { describe, expect, it } from 'vitest';
import { finishedByMonitor } from '../../../src/api/sweep-unfinished-terminates.ts';
import { waitFor } from '../../support/wait-for.ts';
import { twoEngines } from './support/two-engines.ts';
import { insertRun, parked, pass } from './support/tree.ts';

const reason = 'stopped by ops';

/**
 * Review 67, HELD: ADR 0140 §3, "Past [the grace], both may work on the same tree: each run is locked and ended
 * once, by whichever locks it first". Two engines on one PostgreSQL: A terminates P (400 children, 200 of them
 * with a child of their own: six batches after its first commit); B, whose clock is past the 1 s grace of A's
 * fence from the start, runs monitor passes back to back from the moment P is Terminated until A's terminate
 * answers, then one more. Every descendant ends Terminated with one `run.terminated` and one `run.finished`
 * (heard on either engine), with the batch's reason; A's terminate answers `{ terminated: true }` (no lock
 * cycle left to the caller); both ended some.
 */
describe('held: a terminate and the monitor walk one tree together (postgres)', () => {
  const the = twoEngines();

  it('every run ends once, Terminated with its reason; the terminate answers', async () => {
    const { dbA, dbB, a, b } = the;
    const p = await insertRun(dbA);
    const c = await insertRun(dbA, { parent: p, seq: 1 });
    const copy = (parent: string, n: number) => dbA.prisma.$executeRaw`
      insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, parent_run_id, parent_sequence, parent_cancel_policy)
      select ${parked.name}, 1, 'Waiting', 'null'::jsonb, ${parent}::uuid, 1 + g, 'propagate' from generate_series(1, ${n}::int) g`;
    await copy(p, 399);
    // A child under each of the first 200 children (by id), so the walk has two levels.
    await dbA.prisma.$executeRaw`
      insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, parent_run_id, parent_sequence, parent_cancel_policy)
      select ${parked.name}, 1, 'Waiting', 'null'::jsonb, x.id, 1, 'propagate'
        from (select id from "sagaflow"."flow_runs" where parent_run_id = ${p}::uuid order by id limit 200) x`;
    void c;
    const finished = new Map<string, number>();
    for (const e of [a, b])
      e.engine.events.on('run.finished', (ev: { runId: string }) => {
        finished.set(ev.runId, (finished.get(ev.runId) ?? 0) + 1);
      });

    const answer = a.engine.terminate(p, { reason });
    await waitFor('P to be Terminated', async () =>
      (await dbB.prisma.flowRun.findUniqueOrThrow({ where: { id: p } })).status === 'Terminated' ? true : undefined,
    );
    let done = false;
    const settled = answer.finally(() => (done = true));
    let monitorEnded = 0;
    while (!done) monitorEnded += (await pass(b)) ?? 0;
    expect(await settled).toEqual({ terminated: true });
    monitorEnded += (await pass(b)) ?? 0;

    const rows = await dbA.prisma.$queryRaw<
      { id: string; status: string; ok: boolean; events: number; by_monitor: number }[]
    >`
      with recursive t (id, reason) as (
        select id, 'parent ' || ${p}::text || ' was terminated: ' || ${reason}::text
          from "sagaflow"."flow_runs" where parent_run_id = ${p}::uuid
        union all
        select c.id, 'parent ' || t.id::text || ' was terminated: ' || t.reason
          from "sagaflow"."flow_runs" c join t on c.parent_run_id = t.id)
      select r.id::text as id, r.status, (r.error->>'message') = t.reason as ok,
             (select count(*)::int from "sagaflow"."flow_events" e where e.run_id = r.id and e.type = 'run.terminated') as events,
             (select count(*)::int from "sagaflow"."flow_events" e where e.run_id = r.id and e.type = 'run.terminated'
                 and e.data->>'finished_by' = ${finishedByMonitor}) as by_monitor
        from t join "sagaflow"."flow_runs" r on r.id = t.id`;
    expect(rows).toHaveLength(600);
    const summary = {
      terminated: rows.filter((r) => r.status === 'Terminated').length,
      withReason: rows.filter((r) => r.ok).length,
      oneEvent: rows.filter((r) => r.events === 1).length,
      oneFinished: rows.filter((r) => finished.get(r.id) === 1).length,
    };
    const byMonitor = rows.filter((r) => r.by_monitor === 1).length;
    console.log(
      `review67 race: ended by the monitor ${byMonitor} (its passes counted ${monitorEnded}), by A's batches ${600 - byMonitor}`,
    );
    expect(summary).toEqual({ terminated: 600, withReason: 600, oneEvent: 600, oneFinished: 600 });
    expect(byMonitor).toBe(monitorEnded);
    expect(finished.get(p)).toBe(1);
  });
});
