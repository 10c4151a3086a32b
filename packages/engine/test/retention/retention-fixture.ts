import { randomUUID } from 'node:crypto';
import type { SqlSession } from '../../src/db/database.ts';
import { seedHistory } from '../../src/testing/seed-history.ts';

const day = 86_400_000;

async function insertApproval(sql: SqlSession, status: string, payload: unknown): Promise<void> {
  await sql.query(
    `insert into "sagaflow"."repair_approvals" (expires_at, drafter, command, target_type, target_id, payload, preview,
                                               reason, idempotency_key, status)
     values (now() + interval '1 day', 'alice', 'run.terminate', 'run', 'x', $1::jsonb, '{}'::jsonb, 'test', $2, $3)`,
    [JSON.stringify(payload), randomUUID(), status],
  );
}

async function runIdOf(sql: SqlSession, tag: string, n: number): Promise<string> {
  const rows = await sql.query<{ id: string }>(
    `select id::text as id from "sagaflow"."flow_runs" where business_key = $1`,
    [`${tag}-${n}`],
  );
  if (!rows[0]) throw new Error(`no run ${tag}-${n}`);
  return rows[0].id;
}

/**
 * The retention scene: per tag, what a prune 30 days back must delete (`old-done`, `old-done-instance`,
 * `old-published`, the runs an applied approval once named) and what it must keep: newer rows, open
 * runs, a finished child of an open parent and a finished parent of an open child, runs an open
 * approval (single or bulk) names, quarantined and ManualReview instances with their inbox, pending
 * and dead outbox rows, and the audit trail.
 */
export async function seedRetentionScene(sql: SqlSession, now: Date): Promise<void> {
  const old = new Date(now.getTime() - 40 * day);
  const recent = new Date(now.getTime() - day);
  await seedHistory(sql, { tag: 'old-done', at: old, runs: 24 });
  await seedHistory(sql, { tag: 'new-done', at: recent, runs: 8 });
  await seedHistory(sql, { tag: 'old-open', at: old, runs: 4, runState: 'open' });
  await seedHistory(sql, { tag: 'held-done', at: old, runs: 4 });
  await seedHistory(sql, { tag: 'family', at: old, runs: 2 });
  await seedHistory(sql, { tag: 'family-open', at: old, runs: 1, runState: 'open' });
  await seedHistory(sql, { tag: 'old-done-instance', at: old, instances: 6, inbox: 12 });
  await seedHistory(sql, { tag: 'new-done-instance', at: recent, instances: 2, inbox: 4 });
  await seedHistory(sql, { tag: 'quarantined', at: old, instances: 2, instanceStatus: 'QUARANTINED', inbox: 4 });
  const review = { instanceStatus: 'ACTIVE', instanceState: 'ManualReview' } as const;
  await seedHistory(sql, { tag: 'manual-review', at: old, instances: 2, ...review, inbox: 4 });
  await seedHistory(sql, { tag: 'old-published', at: old, outbox: 15 });
  await seedHistory(sql, { tag: 'old-pending', at: old, outbox: 3, outboxStatus: 'Pending' });
  await seedHistory(sql, { tag: 'old-dead', at: old, outbox: 3, outboxStatus: 'Dead' });
  await seedHistory(sql, { tag: 'new-published', at: recent, outbox: 3 });

  // family-1 is a finished child of the open family-open-1; family-open-1 is the parent of nothing
  // finished, and family-2 is a finished parent whose child (old-open-1) is still open.
  await sql.query(
    `update "sagaflow"."flow_runs" set parent_run_id = $1::uuid, parent_sequence = 1 where id = $2::uuid`,
    [await runIdOf(sql, 'family-open', 1), await runIdOf(sql, 'family', 1)],
  );
  await sql.query(
    `update "sagaflow"."flow_runs" set parent_run_id = $1::uuid, parent_sequence = 1 where id = $2::uuid`,
    [await runIdOf(sql, 'family', 2), await runIdOf(sql, 'old-open', 1)],
  );
  // held-done-1 and -2: a pending approval and a bulk being applied name them; -3 and -4 were named
  // by approvals already decided, which hold nothing.
  await insertApproval(sql, 'pending', { target: { runId: await runIdOf(sql, 'held-done', 1) } });
  await insertApproval(sql, 'applying', {
    items: [{ target: { runId: await runIdOf(sql, 'held-done', 2), stepSequence: 1 }, expected: {} }],
  });
  await insertApproval(sql, 'applied', { target: { runId: await runIdOf(sql, 'held-done', 3) } });
  await insertApproval(sql, 'rejected', { items: [{ target: { runId: await runIdOf(sql, 'held-done', 4) } }] });
  // The audit trail and the anomaly log about an old run: never pruned.
  const doomed = await runIdOf(sql, 'old-done', 1);
  await sql.query(
    `insert into "sagaflow"."repair_commands" (actor, command, target_type, target_id, expected, actual, result, reason,
                                              idempotency_key, status)
     values ('alice', 'run.kick', 'run', $1, '{}'::jsonb, '{}'::jsonb, '{}'::jsonb, 'test', $2, 'applied')`,
    [doomed, randomUUID()],
  );
  await sql.query(
    `insert into "sagaflow"."audit_events" (actor, action, outcome, at) values ('alice', 'sign_in', 'succeeded', $1::timestamptz)`,
    [old.toISOString()],
  );
  await sql.query(
    `insert into "sagaflow"."anomaly_log" (code, run_id, message, at) values ('claim_lost', $1::uuid, 'test', $2::timestamptz)`,
    [doomed, old.toISOString()],
  );
}
