import type { Database } from '../../../../src/db/database.ts';

/**
 * Inserts `count` copies of the parked run `templateId` (its row and its steps) with deadlines 1..count
 * seconds before the template's: overdue runs at the head of the stalest-first order. Returns their ids,
 * stalest first.
 */
export async function copiesAhead(db: Database, templateId: string, count: number): Promise<string[]> {
  const copies = await db.prisma.$queryRaw<{ id: string; expires_at: Date }[]>`
    insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, expires_at, started_at)
    select r.flow_name, r.flow_version, r.status, r.input, r.expires_at - make_interval(secs => g), r.started_at
      from "sagaflow"."flow_runs" r, generate_series(1, ${count}::int) g
     where r.id = ${templateId}::uuid
    returning id::text as id, expires_at`;
  await db.prisma.$executeRaw`
    insert into "sagaflow"."action_runs" (run_id, sequence, kind, name, status, input, output, attempts, max_attempts, wake_at, started_at, finished_at)
    select c.id, s.sequence, s.kind, s.name, s.status, s.input, s.output, s.attempts, s.max_attempts, s.wake_at, s.started_at, s.finished_at
      from "sagaflow"."action_runs" s, unnest(${copies.map((c) => c.id)}::uuid[]) c(id)
     where s.run_id = ${templateId}::uuid`;
  return copies.sort((a, b) => a.expires_at.getTime() - b.expires_at.getTime()).map((c) => c.id);
}

export async function isExpired(db: Database, runId: string): Promise<boolean> {
  return (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).expired_at !== null;
}

/** One copy of the parked run `templateId` (its row and its steps) whose deadline is `expiresAt`. Returns its id. */
export async function copyWithDeadline(db: Database, templateId: string, expiresAt: Date): Promise<string> {
  const [copy] = await db.prisma.$queryRaw<{ id: string }[]>`
    insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, expires_at, started_at)
    select r.flow_name, r.flow_version, r.status, r.input, ${expiresAt}::timestamptz, r.started_at
      from "sagaflow"."flow_runs" r where r.id = ${templateId}::uuid
    returning id::text as id`;
  await db.prisma.$executeRaw`
    insert into "sagaflow"."action_runs" (run_id, sequence, kind, name, status, input, output, attempts, max_attempts, wake_at, started_at, finished_at)
    select ${copy!.id}::uuid, s.sequence, s.kind, s.name, s.status, s.input, s.output, s.attempts, s.max_attempts, s.wake_at, s.started_at, s.finished_at
      from "sagaflow"."action_runs" s where s.run_id = ${templateId}::uuid`;
  return copy!.id;
}
