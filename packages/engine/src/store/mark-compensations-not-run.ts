import type { RawDb } from '../db/raw-db.ts';

/**
 * A run closed because its rollback stopped (ADR 0124): the compensations of it still `Pending` will
 * never run, so they are closed `Cancelled` with an error that says they did not run and why. A row
 * left `Pending` on a finished run reads as work still to come. Only `Pending` rows: a `Running` one is
 * in flight (its outcome unknown, ADR 0091) and keeps its status. Call it in the transaction that
 * finished the run, after the finish. Returns how many rows it closed.
 */
export async function markCompensationsNotRun(
  db: RawDb,
  args: { runId: string; because: string; now: Date },
): Promise<number> {
  return db.$executeRaw`
    update "sagaflow"."compensation_runs"
       set status = 'Cancelled',
           error = jsonb_build_object('name', 'NotRun', 'message', ${`never ran: ${args.because}`}::text),
           finished_at = ${args.now}::timestamptz, updated_at = ${args.now}::timestamptz
     where run_id = ${args.runId}::uuid and status = 'Pending'`;
}
