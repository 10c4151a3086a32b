type CompensationLike = { rollbackLevel: number };

/** A row of the compensations table: a compensation, or the header of the rollback level it ran in. */
export type CompensationLine<C extends CompensationLike> =
  { type: 'level'; level: number; count: number } | { type: 'compensation'; compensation: C };

/**
 * Compensations in the order the engine recorded them (rollback level, then newest step first: the
 * order they ran), each level led by a header. A level is one `compensate()` call.
 */
export function compensationLines<C extends CompensationLike>(compensations: readonly C[]): CompensationLine<C>[] {
  const lines: CompensationLine<C>[] = [];
  compensations.forEach((compensation, i) => {
    const level = compensation.rollbackLevel;
    if (compensations[i - 1]?.rollbackLevel !== level) {
      let count = 0;
      for (let j = i; compensations[j]?.rollbackLevel === level; j++) count++;
      lines.push({ type: 'level', level, count });
    }
    lines.push({ type: 'compensation', compensation });
  });
  return lines;
}
