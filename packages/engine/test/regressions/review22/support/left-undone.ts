import type { Database } from '../../../../src/db/database.ts';

export interface LeftUndoneRecord {
  source: string;
  steps: { sequence: number; name: string; compensation: string | null }[];
  plan_error?: string;
  in_flight?: { kind: 'action' | 'compensation'; sequence: number; name: string }[];
}

/**
 * Review 22. What a closed run says it left undone (its error's `left_undone` and its terminal event's),
 * and what its committed rows say, computed the way ADR 0091 defines it: every completed forward action
 * with no compensation row or one that has not completed, and every action or compensation row still Running.
 */
export async function leftUndoneOf(db: Database, runId: string) {
  const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
  const actions = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
  const comps = await db.prisma.compensationRun.findMany({
    where: { run_id: runId },
    orderBy: [{ rollback_level: 'asc' }, { ordinal: 'asc' }],
  });
  const events = await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
  const end = events.find((e) => e.type === 'run.terminated' || e.type === 'run.timedout');
  // A step is compensated when it has compensation rows and every one of them completed (ADR 0091).
  const undone = new Set(comps.filter((c) => c.status !== 'Completed').map((c) => c.action_sequence));
  const compensated = new Set(comps.map((c) => c.action_sequence).filter((s) => !undone.has(s)));
  const inFlight = [
    ...actions
      .filter((a) => a.kind === 'action' && a.status === 'Running')
      .map((a) => ({ kind: 'action' as const, sequence: a.sequence, name: a.name })),
    ...comps
      .filter((c) => c.status === 'Running')
      .map((c) => ({ kind: 'compensation' as const, sequence: c.action_sequence, name: c.name })),
  ];
  const fromRows = {
    steps: actions
      .filter((a) => a.kind === 'action' && a.status === 'Completed' && !compensated.has(a.sequence))
      .map((a) => a.sequence),
    in_flight: inFlight,
  };
  const stated = (run.error as { left_undone?: LeftUndoneRecord } | null)?.left_undone ?? null;
  const onEvent = (end?.data as { left_undone?: LeftUndoneRecord } | null)?.left_undone ?? null;
  return {
    status: run.status,
    /** The list on the run's error. */
    stated,
    /** The list on its terminal event. */
    onEvent,
    /** The two parts of the list as the rows have them now (sequences of steps; in_flight as stated). */
    fromRows,
    /** The stated list reduced to the same shape, to compare with `fromRows`. */
    statedShape: stated ? { steps: stated.steps.map((s) => s.sequence), in_flight: stated.in_flight ?? [] } : null,
    rows: actions.map((a) => [a.sequence, a.kind, a.name, a.status]),
    compensations: comps.map((c) => [c.action_sequence, c.name, c.status]),
    eventTypes: events.map((e) => (e.sequence === null ? e.type : `${e.type}#${e.sequence}`)),
  };
}
