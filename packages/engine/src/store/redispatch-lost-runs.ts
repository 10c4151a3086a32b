import { Prisma } from '../generated/prisma/client.ts';
import { repairCandidatesSql, type RepairCandidatesArgs } from './repair-candidates-sql.ts';
import type { Db } from './types.ts';
import { openRunByKey } from './keyed-status.ts';

export interface RedispatchBatch {
  /** Candidate rows read (the keyset's progress), whether or not their run was re-dispatched. */
  scanned: number;
  /** The highest run id read: the next batch starts above it; null when nothing was read. */
  last: string | null;
  redispatched: { runId: string; rule: string }[];
  /** Runs picked that another session held (skipped), and runs it took (locked), for ADR 0137's count. */
  held: string[];
  taken: string[];
}

/**
 * One doctor batch in ONE statement: reads the next `limit` candidate rows above `after` (the rules'
 * branches merged in run-id order), takes each run's first rule, and for each run that is still open,
 * has repair budget left and no job queued, spends one unit of budget, queues a wake and appends
 * `doctor.redispatched` to its history. The UPDATE locks the run row and re-checks `status` on the
 * newest version, so a run finished meanwhile gets nothing: nothing commits after a terminal event. A run
 * another session holds is skipped (`skip locked`), not waited for: the next pass looks at it again
 * (review 58: one held run must not stop the doctor's pass), and it is answered in `held`, so that one
 * held for good is journaled (ADR 0137).
 */
export async function redispatchLostRuns(db: Db, args: RedispatchArgs): Promise<RedispatchBatch> {
  const rows = await db.$queryRaw<RedispatchBatch[]>(redispatchLostRunsSql(args));
  return rows[0] ?? { scanned: 0, last: null, redispatched: [], held: [], taken: [] };
}

export type RedispatchArgs = Omit<RepairCandidatesArgs, 'limit'> & { limit: number; budget: number };

/** The statement itself, apart so a test can EXPLAIN exactly what the doctor runs. */
export function redispatchLostRunsSql(args: RedispatchArgs): Prisma.Sql {
  return Prisma.sql`
    with scanned as (
      select c.run_id, c.rank, c.rule, c.detail from (${repairCandidatesSql(args)}) c
       order by c.run_id, c.rank
       limit ${args.limit}::int
    ), picked as (
      select distinct on (run_id) run_id, rule, detail from scanned order by run_id, rank
    ), free as (
      select f.id from "sagaflow"."flow_runs" f
       where f.id = any(array(select run_id from picked))
       for no key update skip locked
    ), bumped as (
      update "sagaflow"."flow_runs" r
         set repair_count = r.repair_count + 1
        from picked p
       where r.id = any(array(select id from free)) and r.id = p.run_id
         and ${openRunByKey('r.status')} and r.repair_count < ${args.budget}::int
         and not exists (select 1 from "sagaflow"."jobs" j where j.run_id = r.id)
      returning r.id, p.rule, p.detail
    ), wakes as (
      insert into "sagaflow"."jobs" (kind, run_id, available_at)
      select 'wake-run', b.id, ${args.now}::timestamptz from bumped b
    ), history as (
      insert into "sagaflow"."flow_events" (run_id, type, data)
      select b.id, 'doctor.redispatched', jsonb_build_object('rule', b.rule, 'detail', b.detail) from bumped b
    )
    select (select count(*)::int from scanned) as scanned,
           (select s.run_id::text from scanned s order by s.run_id desc limit 1) as last,
           coalesce((select json_agg(json_build_object('runId', b.id::text, 'rule', b.rule) order by b.id) from bumped b), '[]'::json) as redispatched,
           coalesce((select json_agg(p.run_id::text order by p.run_id) from picked p
                      where p.run_id <> all(array(select id from free))), '[]'::json) as held,
           coalesce((select json_agg(f.id::text order by f.id) from free f), '[]'::json) as taken`;
}
