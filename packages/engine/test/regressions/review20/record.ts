import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import type { Engine } from '../../../src/index.ts';

/**
 * Review 20. The recorded state each test judges: the run, its steps, its compensations, its history
 * (outcome events per step, what came after the terminal event), the anomalies, the audit rows.
 */
export async function recordOf(db: Database, runId: string) {
  const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
  const rows = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
  const comps = await db.prisma.compensationRun.findMany({
    where: { run_id: runId },
    orderBy: [{ rollback_level: 'asc' }, { ordinal: 'asc' }],
  });
  const events = await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
  const anomalies = await db.prisma.anomalyLog.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
  const audits = await db.prisma.repairCommand.findMany({
    where: { target_id: { startsWith: runId } },
    orderBy: { at: 'asc' },
  });
  const names = events.map((ev) => (ev.sequence === null ? ev.type : `${ev.type}#${ev.sequence}`));
  const stepOutcomes = names.filter((n) => /^action\.(completed|failed|expired)#/.test(n));
  const terminal = /^run\.(completed|failed|compensated|expired|cancelled|terminated|timed_?out)$/i;
  const end = names.findIndex((n) => terminal.test(n));
  const expiry = events.find((ev) => ev.type === 'run.expiry_started');
  return {
    run: {
      status: run.status,
      open: run.finished_at === null,
      error: (run.error as { name?: string } | null)?.name ?? null,
    },
    steps: rows.map((r) => [r.sequence, r.kind, r.status, r.attempts]),
    compensations: comps.map((c) => [c.name, c.status, c.attempts]),
    duplicateStepOutcomes: stepOutcomes.filter((n, i) => stepOutcomes.indexOf(n) !== i),
    ends: names.filter((n) => terminal.test(n)).length,
    afterTheEnd: end < 0 ? ['<no end>'] : names.slice(end + 1),
    expiryStarted: expiry ? ((expiry.data as { compensations?: string[] }).compensations ?? null) : null,
    actionExpired: names.filter((n) => n.startsWith('action.expired#')),
    /** Late outcomes turned away, each journaled once: rejected (row changed hands) or refused (run finished). */
    rejected: anomalies
      .filter((a) => a.code === 'outcome_rejected' || a.code === 'write_refused')
      .map((a) => a.sequence)
      .sort(),
    audits: audits.map((a) => [a.command, a.status]),
    auditCompensations: audits.map((a) =>
      ((a.result as { effects?: { compensations?: { name: string }[] } } | null)?.effects?.compensations ?? []).map(
        (c) => c.name,
      ),
    ),
    names,
  };
}

/** Replays the run until it is finished (at most `max` replays), as the wakes due now would. */
export async function driveToEnd(db: Database, e: Engine, runId: string, max = 6): Promise<void> {
  for (let i = 0; i < max; i++) {
    const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    if (r.finished_at !== null) return;
    await executeRun(e.runtime, runId);
  }
}

/** Whether the run is finished or has a wake due now (it is not left open with nothing to wake it). */
export async function drivenOn(db: Database, e: Engine, runId: string): Promise<boolean> {
  const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
  const dueNow = await db.prisma.job.count({
    where: { run_id: runId, kind: 'wake-run', available_at: { lte: e.runtime.clock.now() } },
  });
  return run.finished_at !== null || dueNow > 0 || run.stuck_reason !== null;
}
