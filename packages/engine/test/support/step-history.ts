import type { Database } from '../../src/db/database.ts';

/** A run's history rows in the order they were written, each as its type, `#sequence` for a step's. */
export async function stepHistory(db: Database, runId: string): Promise<string[]> {
  const events = await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
  return events.map((e) => (e.sequence === null ? e.type : `${e.type}#${e.sequence}`));
}

/**
 * The history ({@link stepHistory}) of a top-level run of `steps` action steps one after the other,
 * each completed at its first attempt, that then completed.
 */
export function completedStepsHistory(steps: number): string[] {
  const perStep = Array.from({ length: steps }, (_, i) => [`action.started#${i + 1}`, `action.completed#${i + 1}`]);
  return ['run.started', 'run.running', ...perStep.flat(), 'run.completed'];
}
