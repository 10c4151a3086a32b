import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

export type ActionOutcome =
  | { kind: 'completed'; output: Json }
  | { kind: 'failed'; error: Json; retryAt: Date }
  | { kind: 'errored'; error: Json };

/**
 * Records an outcome only if the row is still Running under the attempts value our claim produced.
 * Zero rows updated means the worker lost (another claimed it, or it was settled without a claim):
 * a recorded terminal state is never overwritten. Returns whether the write landed.
 */
export async function recordActionOutcome(
  db: Db,
  args: { id: string; attempts: number; outcome: ActionOutcome },
): Promise<boolean> {
  const { outcome } = args;
  const status = outcome.kind === 'completed' ? 'Completed' : outcome.kind === 'failed' ? 'Failed' : 'Errored';
  const output = outcome.kind === 'completed' ? JSON.stringify(outcome.output) : null;
  const error = outcome.kind === 'completed' ? null : JSON.stringify(outcome.error);
  const retryAt = outcome.kind === 'failed' ? outcome.retryAt : null;
  const n = await db.$executeRaw`
    update "sagaflow"."action_runs"
       set status = ${status},
           output = ${output}::jsonb,
           error = ${error}::jsonb,
           available_at = coalesce(${retryAt}::timestamptz, available_at),
           reclaim_stale_at = null,
           updated_at = now(),
           finished_at = case when ${status} = 'Failed' then null else now() end
     where id = ${args.id}::uuid and attempts = ${args.attempts}::int and status = 'Running'`;
  return n === 1;
}
