import type { Json } from '../definitions/define-action.ts';
import type { RawDb } from '../db/raw-db.ts';
import {} from './keyed-status.ts';

/**
 * Takes the oldest pending signal of that name for the run, compare-and-swap: a signal is consumed
 * by exactly one wait. Call inside the transaction that settles the waiting step.
 */
export async function consumeSignal(
  db: RawDb,
  args: { runId: string; name: string; sequence: number; now: Date },
): Promise<{ payload: Json } | null> {
  const rows = await db.$queryRaw<{ payload: Json }[]>`
    update "sagaflow"."signals"
       set status = 'Consumed', consumed_at = ${args.now}::timestamptz, consumed_by_sequence = ${args.sequence}::int
     where id = (select id from "sagaflow"."signals"
                  where run_id = ${args.runId}::uuid and name = ${args.name} and status = 'Pending'
                  order by seq limit 1 for update skip locked)
       and status = 'Pending'
    returning payload`;
  return rows[0] ?? null;
}
