import type { Json } from '../definitions/define-action.ts';
import type { RawDb } from '../db/raw-db.ts';
import { statusIn } from './keyed-status.ts';

/**
 * Settles a waiting step (signal, timer, child) once: compare-and-swap from Waiting, so two replays
 * (or a replay and a child's finish) cannot both settle it. Returns whether this call did.
 */
export async function settleWaitStep(
  db: RawDb,
  args: { id: string; status: 'Completed' | 'Errored' | 'Cancelled'; output?: Json; error?: Json; now: Date },
): Promise<boolean> {
  const n = await db.$executeRaw`
    update "sagaflow"."action_runs"
       set status = ${args.status},
           output = ${args.output === undefined ? null : JSON.stringify(args.output)}::jsonb,
           error = ${args.error === undefined ? null : JSON.stringify(args.error)}::jsonb,
           updated_at = ${args.now}::timestamptz,
           finished_at = ${args.now}::timestamptz
     where id = ${args.id}::uuid and ${statusIn('status', ['Waiting'])}`;
  return n === 1;
}
