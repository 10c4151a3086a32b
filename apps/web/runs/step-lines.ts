type StepLike = { sequence: number; kind: string; parallelBlock: number | null };

/** A row of the steps table: a step, or the header of the parallel block the next steps belong to. */
export type StepLine<S extends StepLike> =
  { type: 'block'; block: number; first: number; last: number } | { type: 'step'; step: S; inBlock: boolean };

/**
 * The steps table's rows in sequence order: recorded values (`ctx.now()`, `random()`, `uuid()`)
 * left out unless asked for, and each run of consecutive steps that share a parallel block led by
 * one header row, so steps that ran side by side read as one group.
 */
export function stepLines<S extends StepLike>(steps: readonly S[], showValues: boolean): StepLine<S>[] {
  const shown = steps.filter((s) => showValues || s.kind !== 'value');
  const lines: StepLine<S>[] = [];
  shown.forEach((step, i) => {
    const block = step.parallelBlock;
    if (block !== null && shown[i - 1]?.parallelBlock !== block) {
      let last = step.sequence;
      for (let j = i + 1; shown[j]?.parallelBlock === block; j++) last = shown[j]?.sequence ?? last;
      lines.push({ type: 'block', block, first: step.sequence, last });
    }
    lines.push({ type: 'step', step, inBlock: block !== null });
  });
  return lines;
}

/** How many steps are recorded values (hidden by default). */
export function countValueSteps(steps: readonly StepLike[]): number {
  return steps.filter((s) => s.kind === 'value').length;
}
