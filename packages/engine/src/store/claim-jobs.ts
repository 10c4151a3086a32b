import type { RawDb } from '../db/raw-db.ts';

export interface DbJob {
  id: bigint;
  kind: string;
  run_id: string | null;
  row_id: string | null;
  deliveries: number;
}

/**
 * Leases up to `limit` due jobs. SKIP LOCKED keeps concurrent workers off each other's rows; the
 * lease (locked_until) makes a job whose worker died visible again: at-least-once delivery.
 */
export async function claimJobs(
  db: RawDb,
  args: { workerId: string; limit: number; leaseSeconds: number; now: Date },
): Promise<DbJob[]> {
  return db.$queryRaw<DbJob[]>`
    update "sagaflow"."jobs" j
       set locked_by = ${args.workerId},
           locked_until = ${args.now}::timestamptz + make_interval(secs => ${args.leaseSeconds}::int),
           deliveries = j.deliveries + 1
     where j.id in (
       select id from "sagaflow"."jobs"
        where available_at <= ${args.now}::timestamptz and (locked_until is null or locked_until < ${args.now}::timestamptz)
        order by available_at, id
        limit ${args.limit}::int
        for update skip locked)
    returning j.id, j.kind, j.run_id::text as run_id, j.row_id::text as row_id, j.deliveries`;
}
