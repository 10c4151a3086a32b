import type { Db } from '../types.ts';
import {} from '../keyed-status.ts';

export interface ForgottenStep {
  sequence: number;
  kind: string;
  name: string;
  status: string;
  attempts: number;
  output: unknown;
  error: unknown;
}

/**
 * Forgets a run's recorded steps from `sequence` on, so its next replay schedules them again with the
 * code deployed now (resume from step N): their action rows and timers are deleted, and the signals
 * their waits consumed go back to the run's buffer, in their arrival order. The rows are returned
 * whole, for the repair's audit row and the run's history: what was forgotten stays readable.
 * Call it inside the repair's transaction, with the run row locked.
 */
export async function forgetStepsFrom(db: Db, runId: string, sequence: number): Promise<ForgottenStep[]> {
  await db.$executeRaw`
    update "sagaflow"."signals"
       set status = 'Pending', consumed_by_sequence = null, consumed_at = null
     where run_id = ${runId}::uuid and status = 'Consumed' and consumed_by_sequence >= ${sequence}::int`;
  await db.$executeRaw`
    delete from "sagaflow"."timers" where run_id = ${runId}::uuid and sequence >= ${sequence}::int`;
  return db.$queryRaw<ForgottenStep[]>`
    delete from "sagaflow"."action_runs" where run_id = ${runId}::uuid and sequence >= ${sequence}::int
    returning sequence, kind, name, status, attempts, output, error`;
}
