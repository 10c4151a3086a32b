import type { Db } from '../types.ts';
import { statusIs } from '../keyed-status.ts';

/**
 * Makes an action step claimable now, compare-and-swap on the status and attempts the repair saw:
 * a Failed step (waiting for its retry time) becomes due now; an Errored one goes back to Pending
 * with room for one more attempt (its error stays until the next outcome overwrites it). The
 * engine's own claim then takes it. Returns whether the row was changed.
 */
export async function makeStepDue(
  db: Db,
  args: { id: string; status: 'Failed' | 'Errored'; attempts: number; now: Date },
): Promise<boolean> {
  const changed = await db.$executeRaw`
    update "sagaflow"."action_runs"
       set status = case when status = 'Errored' then 'Pending' else status end,
           max_attempts = case when status = 'Errored' then greatest(max_attempts, attempts + 1) else max_attempts end,
           finished_at = case when status = 'Errored' then null else finished_at end,
           available_at = ${args.now}::timestamptz, updated_at = ${args.now}::timestamptz
     where id = ${args.id}::uuid and ${statusIs('status', args.status)} and attempts = ${args.attempts}::int`;
  return changed === 1;
}
