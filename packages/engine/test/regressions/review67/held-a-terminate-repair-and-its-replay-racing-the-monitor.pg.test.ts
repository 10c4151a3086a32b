import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { finishedByMonitor } from '../../../src/api/sweep-unfinished-terminates.ts';
import { waitFor } from '../../support/wait-for.ts';
import { twoEngines } from './support/two-engines.ts';
import { insertRun, parked, pass } from './support/tree.ts';

const reason = 'stopped by ops';

/**
 * Review 67, HELD: a repair's `run.terminate` (ADR 0126) racing the monitor (ADR 0140, grace 1 s), then the same
 * key sent again while the monitor still passes. Engine A applies the repair to P (300 children, 100 of them with
 * a child); engine B, its clock past the grace, passes back to back from P's fence until both of A's calls have
 * answered. The first answer is `applied`; the replay answers `applied`, `replayed: true`; one audit row; every
 * descendant `Terminated` once with the batch's reason; the runs the monitor ended carry `finished_by`, the
 * others none.
 */
describe('held: a terminate repair and its replay racing the monitor (postgres)', () => {
  const the = twoEngines();

  it('one audit row, every run ended once, both answers applied', async () => {
    const { dbA, dbB, a, b } = the;
    const p = await insertRun(dbA);
    await dbA.prisma.$executeRaw`
      insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, parent_run_id, parent_sequence, parent_cancel_policy)
      select ${parked.name}, 1, 'Waiting', 'null'::jsonb, ${p}::uuid, g, 'propagate' from generate_series(1, 300) g`;
    await dbA.prisma.$executeRaw`
      insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, parent_run_id, parent_sequence, parent_cancel_policy)
      select ${parked.name}, 1, 'Waiting', 'null'::jsonb, x.id, 1, 'propagate'
        from (select id from "sagaflow"."flow_runs" where parent_run_id = ${p}::uuid order by id desc limit 100) x`;
    const command = {
      kind: 'run.terminate' as const,
      target: { runId: p },
      expected: { runStatus: 'Waiting' as const },
      actor: 'ana@example.test',
      reason,
      idempotencyKey: randomUUID(),
    };

    let done = false;
    const answers = (async () => {
      const first = await a.engine.repairs.apply(command);
      const again = await a.engine.repairs.apply(command);
      return { first, again };
    })().finally(() => (done = true));
    await waitFor('P to be Terminated', async () =>
      (await dbB.prisma.flowRun.findUniqueOrThrow({ where: { id: p } })).status === 'Terminated' ? true : undefined,
    );
    let byMonitor = 0;
    let passes = 0;
    const fence = (await dbB.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: p } })).cancel_deadline_at;
    while (!done) {
      passes++;
      byMonitor += (await pass(b)) ?? 0;
    }
    console.log(
      `review67 repair race: ${passes} passes while A worked; fence ${fence?.toISOString()}, B ${b.clock.now().toISOString()}`,
    );
    const { first, again } = await answers;
    byMonitor += (await pass(b)) ?? 0;
    console.log(
      `review67 repair race: monitor ended ${byMonitor}; first answer afterCommit ${JSON.stringify(first.afterCommit)}; replay ${JSON.stringify(again.afterCommit)}`,
    );
    expect([first.status, again.status, again.replayed]).toEqual(['applied', 'applied', true]);
    expect(await dbA.prisma.repairCommand.count({ where: { idempotency_key: command.idempotencyKey } })).toBe(1);

    const [row] = await dbA.prisma.$queryRaw<{ n: number; ok: number; one: number; by_monitor: number }[]>`
      with recursive t (id, reason) as (
        select id, 'parent ' || ${p}::text || ' was terminated: ' || ${reason}::text
          from "sagaflow"."flow_runs" where parent_run_id = ${p}::uuid
        union all
        select c.id, 'parent ' || t.id::text || ' was terminated: ' || t.reason
          from "sagaflow"."flow_runs" c join t on c.parent_run_id = t.id)
      select count(*)::int as n,
             count(*) filter (where r.status = 'Terminated' and r.error->>'message' = t.reason)::int as ok,
             count(*) filter (where (select count(*) from "sagaflow"."flow_events" e
                                      where e.run_id = r.id and e.type = 'run.terminated') = 1)::int as one,
             count(*) filter (where exists (select 1 from "sagaflow"."flow_events" e where e.run_id = r.id
                                      and e.type = 'run.terminated' and e.data->>'finished_by' = ${finishedByMonitor}))::int as by_monitor
        from t join "sagaflow"."flow_runs" r on r.id = t.id`;
    expect(row).toEqual({ n: 400, ok: 400, one: 400, by_monitor: byMonitor });
  });
});
