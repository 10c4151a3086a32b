import type { Database } from '@sagaflow/engine';

/**
 * Everything recorded about one run, read in one REPEATABLE READ snapshot: the run row, its steps,
 * compensations, events (flow_events), signals, timers, anomalies, the repairs aimed at it or its
 * steps, the outbox rows it wrote, and its child runs' ids. Nothing is cut: this is the download a
 * support ticket attaches. Null when no run has this id.
 */
export async function readRunHistory(db: Pick<Database, 'prisma'>, runId: string) {
  return db.prisma.$transaction(
    async (tx) => {
      const run = await tx.flowRun.findUnique({ where: { id: runId } });
      if (!run) return null;
      return {
        kind: 'run' as const,
        run,
        steps: await tx.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } }),
        compensations: await tx.compensationRun.findMany({
          where: { run_id: runId },
          orderBy: [{ rollback_level: 'asc' }, { ordinal: 'asc' }],
        }),
        events: await tx.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } }),
        signals: await tx.signal.findMany({ where: { run_id: runId }, orderBy: { seq: 'asc' } }),
        timers: await tx.timer.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } }),
        anomalies: await tx.anomalyLog.findMany({ where: { run_id: runId }, orderBy: [{ at: 'asc' }, { id: 'asc' }] }),
        repairs: await tx.repairCommand.findMany({
          where: {
            OR: [
              { target_type: 'run', target_id: runId },
              { target_type: 'step', target_id: { startsWith: `${runId}#` } },
            ],
          },
          orderBy: [{ at: 'asc' }, { id: 'asc' }],
        }),
        outbox: await tx.outboxMessage.findMany({
          where: { source_kind: 'flow', source_id: runId },
          orderBy: { seq: 'asc' },
        }),
        childRunIds: (
          await tx.flowRun.findMany({
            where: { parent_run_id: runId },
            select: { id: true },
            orderBy: { parent_sequence: 'asc' },
          })
        ).map((c) => c.id),
      };
    },
    { isolationLevel: 'RepeatableRead', timeout: 30_000 },
  );
}
