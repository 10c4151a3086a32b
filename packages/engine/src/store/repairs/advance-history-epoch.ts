import type { Db } from '../types.ts';

/**
 * Tells every replay of the run that read its steps before now that its view is gone (ADR 0085): the
 * history epoch goes one up, and the version with it, so an older replay's next transition, finish or
 * transaction writes nothing and its park does not land. Call it inside the transaction that rewrites
 * the run's step rows, with the run row locked.
 */
export async function advanceHistoryEpoch(db: Db, args: { runId: string; now: Date }): Promise<void> {
  await db.$executeRaw`
    update "sagaflow"."flow_runs"
       set history_epoch = history_epoch + 1, version = version + 1, updated_at = ${args.now}::timestamptz
     where id = ${args.runId}::uuid`;
}
