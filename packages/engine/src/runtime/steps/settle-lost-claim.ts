import type { Json } from '../../definitions/define-action.ts';
import { Prisma } from '../../generated/prisma/client.ts';
import { enqueueJob } from '../../store/enqueue-job.ts';
import { findOrphanedSteps } from '../../store/find-orphaned-steps.ts';
import { orphanedStepReason } from '../orphaned-step-reason.ts';
import { tableSql, type StepTable } from '../../store/step-table.ts';
import type { ReplaySession } from '../replay/replay-session.ts';

export type LostClaimResult =
  | { kind: 'completed'; output: Json }
  | { kind: 'errored'; error: Json }
  | { kind: 'pending'; waitingFor: string | null; stuckReason?: string; running: boolean };

/**
 * This replay could not run the step: read what the row holds now. Another worker may have
 * finished it (use its result), or still hold it (journal claim_lost; that worker carries on).
 */
export async function settleLostClaim(
  session: ReplaySession,
  step: { table: StepTable; rowId: string; sequence: number; name: string; waitingFor: string | null },
  opts: { journal: boolean } = { journal: true },
): Promise<LostClaimResult> {
  const rows = await session.deps.prisma.$queryRaw<
    {
      status: string;
      output: Json;
      error: Json;
      attempts: number;
      available_at: Date;
      claimed_by: string | null;
      started_at: Date | null;
      reclaim_stale_at: Date | null;
    }[]
  >(
    Prisma.sql`select status, output, error, attempts, available_at, claimed_by, started_at, reclaim_stale_at
                 from ${tableSql(step.table)} where id = ${step.rowId}::uuid`,
  );
  const row = rows[0];
  if (row?.status === 'Completed') return { kind: 'completed', output: row.output };
  if (row?.status === 'Errored') return { kind: 'errored', error: row.error };
  if (row?.status === 'Expired' || row?.status === 'Cancelled') {
    return {
      kind: 'errored',
      error: (step.table === 'action_runs' ? row.error : null) ?? {
        name: 'StepNotCompleted',
        message: `step ${step.sequence} (${step.name}) ended ${row.status}`,
      },
    };
  }
  if (row?.status === 'Running') {
    if (opts.journal)
      await session.deps.journal({
        code: 'claim_lost',
        message: `step ${step.sequence} (${step.name}) is owned by another worker; not executing it`,
        runId: session.runId,
        rowId: step.rowId,
        sequence: step.sequence,
        name: step.name,
        site: step.table,
        details: { attempts: row.attempts },
      });
    if (row.reclaim_stale_at) {
      // The job that brought us here is acknowledged when we park: hand the run back to the queue
      // for the moment the row may be reclaimed, or a dead worker's step would wait for a doctor.
      await enqueueJob(session.deps.prisma, {
        kind: 'wake-run',
        runId: session.runId,
        availableAt: new Date(row.reclaim_stale_at.getTime() + 10),
      });
    } else {
      // No reclaim deadline: only the owner's heartbeat tells a slow worker from a dead one (ADR 0010).
      const [orphan] = await findOrphanedSteps(session.deps.prisma, {
        deadAfterSeconds: session.deps.config.worker.dead_after_seconds,
        rowId: step.rowId,
        limit: 1,
      });
      if (orphan) return { kind: 'pending', waitingFor: null, stuckReason: orphanedStepReason(orphan), running: true };
    }
    return {
      kind: 'pending',
      waitingFor: step.waitingFor ?? runningElsewhere(step, row),
      running: true,
    };
  }
  const retry =
    row?.status === 'Failed'
      ? `retry of step ${step.sequence} (${step.name}) at ${row.available_at.toISOString()}`
      : null;
  return { kind: 'pending', waitingFor: step.waitingFor ?? retry, running: false };
}

/** What an operator needs to judge a step held by another worker: who, since when, and whether reclaim can ever take it over. */
function runningElsewhere(
  step: { sequence: number; name: string },
  row: { claimed_by: string | null; started_at: Date | null; reclaim_stale_at: Date | null; attempts: number },
): string {
  const who = `step ${step.sequence} (${step.name}) is running on another worker (${row.claimed_by ?? 'unknown'}, attempt ${row.attempts}, since ${row.started_at?.toISOString() ?? '?'})`;
  return row.reclaim_stale_at
    ? `${who}; it can be reclaimed after ${row.reclaim_stale_at.toISOString()}`
    : `${who}; reclaim is off for this step, so if that worker died the run waits for an operator`;
}
