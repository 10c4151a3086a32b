import type { Database } from '@sagaflow/engine';

/** The seed's only need: a statement with parameters. */
type SqlSession = Pick<Database['driver'], 'query'>;

/** The shape of a console-scale seed: `runs` sets every other count unless given. */
export interface ConsoleScaleOptions {
  runs: number;
  /** Rows per statement (runs; instances are a fifth of it): the unit of a progress line. */
  chunk?: number;
  /** The moment the data ends at: the newest run is created just before it, the oldest 30 days earlier. */
  now?: Date;
  onProgress?: (line: string) => void;
}

/** What the seed wrote, for the report and for picking sample ids. */
export interface ConsoleScaleSeed {
  runs: number;
  instances: number;
  /** Runs that carry a stuck reason (1 %, of every age). */
  stuck: number;
  span: { from: Date; to: Date };
}

/** The flows and the process the seeded rows claim to belong to (none is registered: no worker touches them). */
export const scaleFlows = ['scale.fulfil-order', 'scale.refund', 'scale.ship', 'scale.invoice', 'scale.notify'];
export const scaleProcess = 'scale.fulfilment';
export const stuckKinds = ['owner_gone', 'replay_blocked', 'unknown_flow', 'expiry_failed'];

/**
 * A run's or an instance's id from its ordinal: random-looking (as gen_random_uuid's are), shaped as a
 * version 4 UUID (the API checks), and recomputable in SQL.
 */
const uuidSql = (seed: string) => `overlay(overlay(md5(${seed}) placing '4' from 13) placing '8' from 17)::uuid`;
export const runIdSql = (i: string) => uuidSql(`'run-' || ${i}`);
export const instanceIdSql = (j: string) => uuidSql(`'instance-' || ${j}`);

const spanMs = 30 * 86_400_000;

/**
 * Writes a console's worth of history in set-based statements, chunk by chunk, with one progress
 * line per chunk: runs over 30 days (newest last) with a realistic mix — 2 % open and healthy
 * (the newest), 1 % stuck (Waiting or Running with a reason, ages from minutes to 30 days), the rest
 * finished (85 % Completed, then Failed, Compensated, Expired, Cancelled, Terminated); about five
 * steps and four events per run, two compensations per Compensated run; an anomaly per hundred runs; instances (a fifth of the runs: 1 %
 * QUARANTINED, 89 % COMPLETED, the rest ACTIVE in four states) with five transitions each, an armed
 * timeout per ACTIVE one and four published outbox rows each; audit and repair rows (1 % of runs).
 * Shared by the scale bench (1 M runs) and the plan test (a few tens of thousands). Nothing here is
 * overdue: the sweeps' backlogs are seeded apart, so a running control plane leaves these rows alone.
 */
export async function seedConsoleScale(sql: SqlSession, o: ConsoleScaleOptions): Promise<ConsoleScaleSeed> {
  const n = o.runs;
  const chunk = o.chunk ?? 100_000;
  const to = o.now ?? new Date();
  const from = new Date(to.getTime() - spanMs);
  const log = o.onProgress ?? (() => undefined);
  const started = performance.now();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
  for (let lo = 1; lo <= n; lo += chunk) {
    const hi = Math.min(n, lo + chunk - 1);
    await seedRuns(sql, { lo, hi, n, to });
    log(`seeded runs ${hi.toLocaleString('en')} / ${n.toLocaleString('en')} with steps and events (${elapsed()})`);
  }
  const instances = Math.max(1, Math.floor(n / 5));
  for (let lo = 1; lo <= instances; lo += chunk) {
    const hi = Math.min(instances, lo + chunk - 1);
    await seedInstances(sql, { lo, hi, n: instances, to });
    log(
      `seeded instances ${hi.toLocaleString('en')} / ${instances.toLocaleString('en')} with transitions and outbox (${elapsed()})`,
    );
  }
  await seedJournals(sql, { n, to });
  log(`seeded anomalies, audit and repair rows (${elapsed()})`);
  return { runs: n, instances, stuck: Math.floor(n / 100), span: { from, to } };
}

/** The i-th run's creation time: evenly over the 30 days before `to`, the n-th newest. */
const createdSql = (i: string) =>
  `$3::timestamptz - (($4::bigint - ${i}) * ${spanMs / 1000}.0 / $4::bigint) * interval '1 second'`;

async function seedRuns(sql: SqlSession, a: { lo: number; hi: number; n: number; to: Date }) {
  // kind: 'open' (the newest 2 %), 'stuck' (every hundredth), else a terminal status by a spread of i.
  const runs = `
    select i, ${runIdSql('i')} as id, ${createdSql('i')} as created,
           case when i > $4::bigint * 98 / 100 then 'open' when i % 100 = 50 then 'stuck' else 'done' end as kind,
           (i * 7919) % 1000 as b
      from generate_series($1::bigint, $2::bigint) i`;
  await sql.query(
    `insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, business_key, status, stuck_reason, waiting_for,
                                        input, output, error, created_at, updated_at, started_at, finished_at)
     select id, (array['${scaleFlows.join("','")}'])[1 + i % ${scaleFlows.length}], 1, 'order-' || i,
            case kind when 'open' then (array['Running','Waiting','Pending','Waiting'])[1 + i % 4]
                      when 'stuck' then (array['Waiting','Running'])[1 + i % 2]
                      else case when b < 850 then 'Completed' when b < 900 then 'Failed' when b < 930 then 'Compensated'
                                when b < 950 then 'Expired' when b < 980 then 'Cancelled' else 'Terminated' end end,
            case kind when 'stuck' then (array['${stuckKinds.join("','")}'])[1 + (i / 100) % ${stuckKinds.length}]
                        || ': seeded at scale' end,
            case when kind = 'open' and i % 4 in (1, 3) then 'signal "confirm"' end,
            jsonb_build_object('orderId', 'order-' || i, 'lines', 1 + i % 5, 'note', repeat('x', 100)),
            case when kind = 'done' and b < 850 then jsonb_build_object('shipmentId', 's-' || i) end,
            case when kind = 'done' and b >= 850 and b < 900 then '{"message":"card declined"}'::jsonb end,
            created, created + interval '2 seconds', created,
            case when kind = 'done' then created + interval '2 seconds' end
       from (${runs}) r`,
    [a.lo, a.hi, a.to, a.n],
  );
  // Five steps a finished run, three an open one (two done, the third where it stands).
  await sql.query(
    `insert into "sagaflow"."action_runs" (run_id, sequence, name, status, input, output, attempts,
                                          created_at, updated_at, started_at, finished_at)
     select id, s, 'step-' || s,
            case when kind = 'done' or s < 3 then (case when kind = 'done' and s = 5 and b >= 850 and b < 900 then 'Errored' else 'Completed' end)
                 when kind = 'stuck' then 'Running' else 'Pending' end,
            '{"n":1}'::jsonb, case when kind = 'done' or s < 3 then '{"ok":true}'::jsonb end, 1,
            created, created + interval '2 seconds', created, case when kind = 'done' or s < 3 then created + interval '1 second' end
       from (${runs}) r, generate_series(1, 5) s
      where kind = 'done' or s <= 3`,
    [a.lo, a.hi, a.to, a.n],
  );
  await sql.query(
    `insert into "sagaflow"."compensation_runs" (run_id, action_sequence, ordinal, name, status, input, output, attempts,
                                                created_at, updated_at, started_at, finished_at)
     select id, 3 - c, c, 'undo-step-' || (3 - c), 'Completed', '{"n":1}'::jsonb, '{"ok":true}'::jsonb, 1,
            created + interval '1 second', created + interval '2 seconds', created + interval '1 second',
            created + interval '2 seconds'
       from (${runs}) r, generate_series(0, 1) c
      where kind = 'done' and b >= 900 and b < 930`,
    [a.lo, a.hi, a.to, a.n],
  );
  await sql.query(
    `insert into "sagaflow"."flow_events" (run_id, type, sequence, data, at)
     select id, (array['run.started','step.completed','step.completed','run.finished'])[e], case when e in (2, 3) then e - 1 end,
            '{}'::jsonb, created + e * interval '400 milliseconds'
       from (${runs}) r, generate_series(1, 4) e
      where kind = 'done' or e < 4`,
    [a.lo, a.hi, a.to, a.n],
  );
}

async function seedInstances(sql: SqlSession, a: { lo: number; hi: number; n: number; to: Date }) {
  const instances = `
    select j, ${instanceIdSql('j')} as id, ${createdSql('j')} as created,
           case when j % 100 = 30 then 'QUARANTINED' when (j * 7919) % 1000 < 900 then 'COMPLETED' else 'ACTIVE' end as status
      from generate_series($1::bigint, $2::bigint) j`;
  const params = [a.lo, a.hi, a.to, a.n];
  await sql.query(
    `insert into "sagaflow"."saga_instances" (id, process_name, correlation_key, status, current_state, state, version,
                                             state_visit, last_message_id, failure_redelivery_key, failure_error_type,
                                             failure_message, first_failed_at, created_at, updated_at, completed_at)
     select id, '${scaleProcess}', 'order-' || j, status,
            case status when 'COMPLETED' then 'Done' when 'QUARANTINED' then 'Packing'
                        else (array['AwaitingPayment','Packing','Shipping','AwaitingPayment','Packing','ManualReview'])[1 + j % 6] end,
            jsonb_build_object('orderId', 'order-' || j), 5, 5, 'm-' || j || '-5',
            case when status = 'QUARANTINED' then 'm-' || j || '-5' end,
            case when status = 'QUARANTINED' then 'StockServiceDown' end,
            case when status = 'QUARANTINED' then 'stock service answered 503' end,
            case when status = 'QUARANTINED' then created + interval '5 minutes' end,
            created, created + interval '5 minutes', case when status = 'COMPLETED' then created + interval '5 minutes' end
       from (${instances}) x`,
    params,
  );
  await sql.query(
    `insert into "sagaflow"."process_transitions" (instance_id, process_name, from_state, to_state, message_id, message_type, at)
     select id, '${scaleProcess}', (array['Start','AwaitingPayment','Packing','Shipping','Delivered'])[t],
            (array['AwaitingPayment','Packing','Shipping','Delivered','Done'])[t], 'm-' || j || '-' || t,
            (array['OrderPlaced','PaymentCaptured','Packed','Shipped','Delivered'])[t], created + t * interval '1 minute'
       from (${instances}) x, generate_series(1, 5) t`,
    params,
  );
  await sql.query(
    `insert into "sagaflow"."process_timeouts" (instance_id, name, expected_state, armed_visit, due_at)
     select id, 'reminder', 'Packing', 5, $3::timestamptz + interval '1 day' from (${instances}) x where status = 'ACTIVE'`,
    params,
  );
  await sql.query(
    `insert into "sagaflow"."outbox" (message_id, source_kind, source_id, type, destination, payload, status,
                                     attempts, available_at, created_at, published_at)
     select 'out-' || j || '-' || k, 'process', id::text, 'ShipmentRequested', 'shipping', jsonb_build_object('k', k),
            'Published', 1, created, created, created + interval '1 second'
       from (${instances}) x, generate_series(1, 4) k`,
    params,
  );
}

async function seedJournals(sql: SqlSession, a: { n: number; to: Date }) {
  const params = [1, Math.max(1, Math.floor(a.n / 100)), a.to, a.n];
  const codes = ['claim_lost', 'outcome_rejected', 'write_refused', 'expiry_failed', 'transition_lost'];
  await sql.query(
    `insert into "sagaflow"."anomaly_log" (code, run_id, sequence, name, message, at)
     select (array['${codes.join("','")}'])[1 + k % ${codes.length}], ${runIdSql('k * 100')}, 2, 'step-2',
            'seeded anomaly', ${createdSql('k * 100')}
       from generate_series($1::bigint, $2::bigint) k`,
    params,
  );
  await sql.query(
    `insert into "sagaflow"."repair_commands" (at, actor, command, target_type, target_id, expected, actual, result,
                                              reason, idempotency_key, status)
     select ${createdSql('k * 100')}, (array['alice','bob','carol'])[1 + k % 3], 'run.kick', 'run', (${runIdSql('k * 100')})::text,
            '{}'::jsonb, '{}'::jsonb, '{}'::jsonb, 'seeded repair', 'seed-' || k, 'applied'
       from generate_series($1::bigint, $2::bigint) k`,
    params,
  );
  await sql.query(
    `insert into "sagaflow"."audit_events" (at, actor, action, target_type, target_id, outcome)
     select ${createdSql('k * 100')}, (array['alice','bob','carol'])[1 + k % 3],
            (array['sign_in','repair','sign_out'])[1 + k % 3], 'run', (${runIdSql('k * 100')})::text, 'succeeded'
       from generate_series($1::bigint, $2::bigint) k`,
    params,
  );
}

/** Sample rows of a seed for the console's catalogue: a finished run with an anomaly, an instance, the middle of the list. */
export async function pickSamples(sql: SqlSession, seed: ConsoleScaleSeed) {
  const k = Math.max(1, Math.floor(seed.runs / 200)) * 100;
  const [middle] = await sql.query<{ at: Date; id: string }>(
    `select created_at as at, id::text as id from "sagaflow"."flow_runs" where id = ${runIdSql('$1::bigint')}`,
    [Math.ceil(seed.runs / 2)],
  );
  const [ids] = await sql.query<{ run: string; instance: string }>(
    `select (${runIdSql('$1::bigint')})::text as run, (${instanceIdSql('$2::bigint')})::text as instance`,
    [k, Math.ceil(seed.instances / 2)],
  );
  if (!middle || !ids) throw new Error('pickSamples: the seeded rows are missing');
  return { runId: ids.run, instanceId: ids.instance, middle, businessKey: `order-${Math.floor(seed.runs / 3)}` };
}
