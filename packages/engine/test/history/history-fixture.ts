import type { SqlSession } from '../../src/db/database.ts';

/** A run with no history yet: the rows below are what a recording run would have appended. */
export async function insertRun(sql: SqlSession, flowName: string): Promise<string> {
  const [row] = await sql.query<{ id: string }>(
    `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input)
     values ($1, 1, 'Running', '{}'::jsonb) returning id::text as id`,
    [flowName],
  );
  return row!.id;
}

/** Steps `from`..`to` (by sequence) and one event each: a run that keeps recording. */
export async function recordSteps(sql: SqlSession, runId: string, from: number, to: number): Promise<void> {
  await sql.query(
    `with s as (insert into "sagaflow"."action_runs" (run_id, sequence, name, status, input, attempts)
                select $1::uuid, g, 'step-' || g, 'Completed', '{}'::jsonb, 1 from generate_series($2::int, $3::int) g
                returning id, sequence)
     insert into "sagaflow"."flow_events" (run_id, type, sequence, row_id, data)
     select $1::uuid, 'StepCompleted', s.sequence, s.id, '{}'::jsonb from s order by s.sequence`,
    [runId, from, to],
  );
}

/** Events with the given ids, chosen by the test (the id order is what is under test). */
export async function insertEventsWithIds(sql: SqlSession, runId: string, ids: readonly number[]): Promise<void> {
  await sql.query(
    `insert into "sagaflow"."flow_events" (id, run_id, type, data)
     select g, $1::uuid, 'Marked', jsonb_build_object('id', g) from unnest($2::bigint[]) g`,
    [runId, ids.map(String)],
  );
}

/** An instance with no history yet. */
export async function insertInstance(sql: SqlSession, key: string): Promise<string> {
  const [row] = await sql.query<{ id: string }>(
    `insert into "sagaflow"."saga_instances" (process_name, correlation_key, current_state, state)
     values ('paging.process', $1, 'S0', '{}'::jsonb) returning id::text as id`,
    [key],
  );
  return row!.id;
}

/** The process of the instance `$1` (a transition carries it). */
const processOf = `(select process_name from "sagaflow"."saga_instances" where id = $1::uuid)`;

/** `count` more transitions of an instance that keeps moving (ids from the sequence, or given). */
export async function recordTransitions(
  sql: SqlSession,
  instanceId: string,
  rows: { count: number } | { ids: readonly number[] },
): Promise<void> {
  if ('ids' in rows) {
    await sql.query(
      `insert into "sagaflow"."process_transitions" (id, instance_id, process_name, from_state, to_state, message_id, message_type)
       select g, $1::uuid, ${processOf}, 'S', 'S', 'm-' || g, 'Step' from unnest($2::bigint[]) g`,
      [instanceId, rows.ids.map(String)],
    );
    return;
  }
  await sql.query(
    `insert into "sagaflow"."process_transitions" (instance_id, process_name, from_state, to_state, message_id, message_type)
     select $1::uuid, ${processOf}, 'S', 'S', 'm-' || gen_random_uuid(), 'Step' from generate_series(1, $2::int)`,
    [instanceId, rows.count],
  );
}

/** Ids across every digit boundary up to 100,000: 8, 9, 10, 11, 98, 99, 100, 101, ... */
export const digitBoundaryIds = [1, 2, 3, 4, 5].flatMap((d) => {
  const b = 10 ** d;
  return [b - 2, b - 1, b, b + 1];
});
