import type { SqlSession } from '../db/database.ts';

/** One cohort of history rows, all stamped with one time and named by `tag`. */
export interface SeedHistoryOptions {
  /** The flow_name of its runs, the process_name of its instances, the source_id of its outbox rows. */
  tag: string;
  /** When its runs finished (or started, if open), its instances completed, its messages went. */
  at: Date;
  runs?: number;
  /** finished: Completed, Failed, Compensated or Cancelled in turn; open: Running, step 1 Running. */
  runState?: 'finished' | 'open';
  stepsPerRun?: number;
  eventsPerRun?: number;
  instances?: number;
  instanceStatus?: 'COMPLETED' | 'ACTIVE' | 'QUARANTINED';
  /** The instances' current state (for a COMPLETED one, a final state). */
  instanceState?: string;
  transitionsPerInstance?: number;
  outbox?: number;
  outboxStatus?: 'Published' | 'Pending' | 'Dead';
  /** Inbox records, one per message, shared round-robin among the cohort's instances. */
  inbox?: number;
}

/**
 * Writes a cohort of runs (with steps, events, and on every fourth a compensation, a signal, a timer and a job),
 * instances with transitions, outbox rows and inbox records in a few set-based statements, so a
 * test or a bench can lay down hundreds of thousands of rows in seconds. The rows are shaped as the
 * engine writes them, not produced by running flows.
 */
export async function seedHistory(sql: SqlSession, o: SeedHistoryOptions): Promise<void> {
  const open = o.runState === 'open';
  const at = o.at.toISOString();
  if ((o.runs ?? 0) > 0) {
    await sql.query(
      `insert into "sagaflow"."flow_runs" (flow_name, flow_version, business_key, status, input, output,
                                          created_at, updated_at, started_at, finished_at)
       select $1, 1, $1 || '-' || g,
              case when $4 then 'Running' else (array['Completed','Failed','Compensated','Cancelled'])[1 + g % 4] end,
              jsonb_build_object('n', g), case when $4 then null else '{"ok":true}'::jsonb end,
              $2::timestamptz - interval '1 minute', $2::timestamptz, $2::timestamptz - interval '1 minute',
              case when $4 then null else $2::timestamptz end
         from generate_series(1, $3::int) g`,
      [o.tag, at, o.runs, open],
    );
    const runs = `select id, (input->>'n')::int % 4 = 0 as fourth from "sagaflow"."flow_runs" where flow_name = $1`;
    await sql.query(
      `insert into "sagaflow"."action_runs" (run_id, sequence, name, status, input, output, attempts,
                                            created_at, updated_at, started_at, finished_at)
       select r.id, s, 'step-' || s, case when $4 and s = 1 then 'Running' else 'Completed' end,
              '{}'::jsonb, '{"ok":true}'::jsonb, 1, $2::timestamptz, $2::timestamptz, $2::timestamptz,
              case when $4 and s = 1 then null else $2::timestamptz end
         from (${runs}) r cross join generate_series(1, $3::int) s`,
      [o.tag, at, o.stepsPerRun ?? 5, open],
    );
    await sql.query(
      `insert into "sagaflow"."flow_events" (run_id, type, sequence, data, at)
       select r.id, 'StepCompleted', e, '{}'::jsonb, $2::timestamptz
         from (${runs}) r cross join generate_series(1, $3::int) e`,
      [o.tag, at, o.eventsPerRun ?? 7],
    );
    await sql.query(
      `with r as (${runs})
       , c as (insert into "sagaflow"."compensation_runs" (run_id, action_sequence, name, status, input, created_at, updated_at)
               select id, 1, 'undo-step-1', 'Completed', '{}'::jsonb, $2::timestamptz, $2::timestamptz from r where fourth)
       , s as (insert into "sagaflow"."signals" (run_id, name, payload, status, created_at)
               select id, 'confirm', 'true'::jsonb, 'Consumed', $2::timestamptz from r where fourth)
       , j as (insert into "sagaflow"."jobs" (kind, run_id, available_at, created_at)
               select 'wake-run', id, $2::timestamptz, $2::timestamptz from r where fourth)
       insert into "sagaflow"."timers" (run_id, sequence, fire_at, status, created_at)
       select id, 99, $2::timestamptz, 'Fired', $2::timestamptz from r where fourth`,
      [o.tag, at],
    );
  }
  if ((o.instances ?? 0) > 0) {
    const status = o.instanceStatus ?? 'COMPLETED';
    await sql.query(
      `insert into "sagaflow"."saga_instances" (process_name, correlation_key, status, current_state, state,
                                               created_at, updated_at, completed_at)
       select $1, $1 || '-' || g, $3, $4, '{}'::jsonb, $2::timestamptz - interval '1 minute', $2::timestamptz,
              case when $3 = 'COMPLETED' then $2::timestamptz end
         from generate_series(1, $5::int) g`,
      [o.tag, at, status, o.instanceState ?? (status === 'COMPLETED' ? 'Completed' : 'AwaitingPayment'), o.instances],
    );
    await sql.query(
      `insert into "sagaflow"."process_transitions" (instance_id, process_name, from_state, to_state, message_id, message_type, at)
       select i.id, i.process_name, 'S' || t, 'S' || (t + 1), i.correlation_key || '-m' || t, 'Step', $2::timestamptz
         from "sagaflow"."saga_instances" i cross join generate_series(1, $3::int) t
        where i.process_name = $1`,
      [o.tag, at, o.transitionsPerInstance ?? 5],
    );
  }
  if ((o.outbox ?? 0) > 0)
    await sql.query(
      `insert into "sagaflow"."outbox" (message_id, source_kind, source_id, type, destination, payload, status,
                                       attempts, created_at, published_at)
       select $1 || '-out-' || g, 'process', $1, 'Ship', 'carrier', '{}'::jsonb, $3,
              case when $3 = 'Pending' then 0 else 1 end, $2::timestamptz,
              case when $3 = 'Published' then $2::timestamptz end
         from generate_series(1, $4::int) g`,
      [o.tag, at, o.outboxStatus ?? 'Published', o.outbox],
    );
  if ((o.inbox ?? 0) > 0)
    await sql.query(
      `with i as (select id, row_number() over (order by id) - 1 as k
                    from "sagaflow"."saga_instances" where process_name = $1),
            n as (select greatest(count(*), 1) as n from i)
       insert into "sagaflow"."inbox" (consumer, message_id, message_type, instance_id, received_at)
       select $1, $1 || '-in-' || g, 'Step', i.id, $2::timestamptz
         from generate_series(1, $3::int) g cross join n left join i on i.k = g % n.n`,
      [o.tag, at, o.inbox],
    );
}
