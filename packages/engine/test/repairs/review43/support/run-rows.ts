import type { openTestEngine } from '../../../support/open-test-engine.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

/**
 * Review 43: every row that belongs to one run (its flow_runs row and children, its steps,
 * compensations, history, signals, timers, jobs, anomalies) and the whole outbox, as sorted JSON.
 * Two snapshots are equal only if nothing of the run was added, removed or changed. The audit
 * tables (repair_commands, repair_approvals, audit_events) are left out: a refusal records itself there.
 */
export async function snapshotRun(t: T, runId: string): Promise<Record<string, unknown[]>> {
  const p = t.db.prisma;
  const q = async (sql: string) =>
    (
      await p.$queryRawUnsafe<{ rows: unknown[] }[]>(
        `select coalesce(json_agg(x order by x::text), '[]'::json) as rows from (${sql}) s(x)`,
        runId,
      )
    )[0]?.rows ?? [];
  return {
    flow_runs: await q(
      `select to_jsonb(t) from "sagaflow"."flow_runs" t where id = $1::uuid or parent_run_id = $1::uuid`,
    ),
    action_runs: await q(`select to_jsonb(t) from "sagaflow"."action_runs" t where run_id = $1::uuid`),
    compensation_runs: await q(`select to_jsonb(t) from "sagaflow"."compensation_runs" t where run_id = $1::uuid`),
    flow_events: await q(`select to_jsonb(t) from "sagaflow"."flow_events" t where run_id = $1::uuid`),
    signals: await q(`select to_jsonb(t) from "sagaflow"."signals" t where run_id = $1::uuid`),
    timers: await q(`select to_jsonb(t) from "sagaflow"."timers" t where run_id = $1::uuid`),
    jobs: await q(`select to_jsonb(t) from "sagaflow"."jobs" t where run_id = $1::uuid`),
    anomaly_log: await q(`select to_jsonb(t) from "sagaflow"."anomaly_log" t where run_id = $1::uuid`),
    outbox: await q(`select to_jsonb(t) from "sagaflow"."outbox" t where $1::uuid is not null`),
  };
}

/** The nine run and step repair kinds of the catalogue. */
export const runKinds = [
  'run.kick',
  'run.retry_step',
  'run.reclaim_step',
  'run.cancel',
  'run.terminate',
  'run.signal',
  'run.expire',
  'run.complete_step',
  'run.resume_from_step',
] as const;

/** Gates every run kind and any bulk (threshold 0 items... 1 means bulks over one target). */
export async function gateEverything(t: T): Promise<void> {
  await t.engine.approvals.setPolicy({ gatedCommands: [...runKinds], bulkThreshold: 1 }, { actor: 'r43-admin' });
}

/** Waits, by progress, until `ok` holds of the run detail (polls every 15 ms, gives up after 10 s). */
export async function until<R>(read: () => Promise<R>, ok: (r: R) => boolean, what: string): Promise<R> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await read();
    if (ok(r)) return r;
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}: ${JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)).slice(-1500)}`,
      );
    await new Promise((res) => setTimeout(res, 15));
  }
}
