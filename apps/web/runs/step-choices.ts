import type { DraftCommand } from '@/repairs/repair-draft-types';
import type { CompensationRow, StepRow } from '@/trpc/api-types';

/** One row a step command can be drafted against: its picker entry, its target and the state shown. */
export interface StepChoice {
  value: string;
  label: string;
  target: DraftCommand['target'];
  expected: { stepStatus: string; stepAttempts: number };
}

const attemptsText = (n: number) => `${n} attempt${n === 1 ? '' : 's'}`;

/**
 * The rows the step form offers for a command: the run's steps, and for a reclaim its compensations
 * too (the engine reclaims a compensation held by a dead worker like a step, ADR 0031). A
 * compensation is named by its rollback level and its place in the level, as the engine targets it.
 */
export function stepChoices(
  kind: string,
  runId: string,
  steps: readonly StepRow[],
  compensations: readonly CompensationRow[],
): StepChoice[] {
  const forSteps = steps.map((s) => ({
    value: `step:${s.sequence}`,
    label: `#${s.sequence} ${s.name} (${s.status}, ${attemptsText(s.attempts)})`,
    target: { runId, stepSequence: s.sequence },
    expected: { stepStatus: s.status, stepAttempts: s.attempts },
  }));
  if (kind !== 'run.reclaim_step') return forSteps;
  const forCompensations = compensations.map((c) => ({
    value: `compensation:${c.rollbackLevel}.${c.ordinal}`,
    label: `rollback ${c.rollbackLevel}.${c.ordinal}: ${c.name}, undoing #${c.actionSequence} (${c.status}, ${attemptsText(c.attempts)})`,
    target: { runId, compensation: { rollbackLevel: c.rollbackLevel, ordinal: c.ordinal } },
    expected: { stepStatus: c.status, stepAttempts: c.attempts },
  }));
  return [...forSteps, ...forCompensations];
}
