import type { OrphanedStep } from '../store/find-orphaned-steps.ts';

/** What an operator reads on the run: which step, which worker, since when, and the repair. */
export function orphanedStepReason(
  s: Pick<OrphanedStep, 'table' | 'id' | 'sequence' | 'name' | 'claimed_by' | 'gone_since'>,
): string {
  const what =
    s.table === 'action_runs' ? `step ${s.sequence} (${s.name})` : `compensation ${s.name} of step ${s.sequence}`;
  return `owner_gone: ${what} held by worker ${s.claimed_by} which is gone since ${s.gone_since.toISOString()}; reclaim it (engine.reclaimStep(runId, { stepId: '${s.id}' }), or kick the run) to run it again`;
}
