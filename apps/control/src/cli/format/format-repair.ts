import type { RepairEffects } from '@sagaflow/engine';

/** One line per effect a repair had (or would have), for people. */
export function effectLines(effects: RepairEffects | undefined): string[] {
  if (!effects) return [];
  return [
    ...effects.transitions.map((t) => `  transition  ${t.subject}: ${t.from} → ${t.to}`),
    ...effects.compensations.map((c) => `  compensate  step ${c.actionSequence} (${c.name})`),
    ...effects.jobs.map((j) => `  job         ${j.kind} for run ${j.runId} at ${j.availableAt}`),
    ...effects.signals.map((s) => `  signal      ${s.name} to run ${s.runId}`),
    ...effects.outboxMessages.map((m) => `  outbox      ${m.type} → ${m.destination}`),
    ...effects.history.map((h) => `  history     ${h}`),
    ...effects.notes.map((n) => `  note        ${n}`),
  ];
}

/** What a repair's work after its commit did (a terminate's descendants, ADR 0126), for people. */
export const afterCommitLines = (afterCommit: readonly string[] | undefined): string[] =>
  (afterCommit ?? []).map((n) => `  then        ${n}`);
