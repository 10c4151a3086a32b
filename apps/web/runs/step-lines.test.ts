import { describe, expect, it } from 'vitest';
import { countValueSteps, stepLines } from './step-lines';

const step = (sequence: number, kind = 'action', parallelBlock: number | null = null) => ({
  sequence,
  kind,
  parallelBlock,
});

describe('stepLines', () => {
  const steps = [step(1), step(2, 'value'), step(3, 'action', 3), step(4, 'action', 3), step(5, 'timer')];

  it('hides recorded values unless asked, and counts them', () => {
    expect(stepLines(steps, false).flatMap((l) => (l.type === 'step' ? [l.step.sequence] : []))).toEqual([1, 3, 4, 5]);
    expect(stepLines(steps, true).filter((l) => l.type === 'step')).toHaveLength(5);
    expect(countValueSteps(steps)).toBe(1);
  });

  it('puts one header before the consecutive steps of a parallel block and marks them', () => {
    const lines = stepLines(steps, false);
    expect(
      lines.map((l) =>
        l.type === 'block' ? `block ${l.first}-${l.last}` : `${l.step.sequence}${l.inBlock ? '*' : ''}`,
      ),
    ).toEqual(['1', 'block 3-4', '3*', '4*', '5']);
  });

  it('starts a new header for a second block right after the first', () => {
    const lines = stepLines([step(1, 'action', 1), step(2, 'action', 1), step(3, 'action', 3)], false);
    expect(lines.filter((l) => l.type === 'block')).toEqual([
      { type: 'block', block: 1, first: 1, last: 2 },
      { type: 'block', block: 3, first: 3, last: 3 },
    ]);
  });
});
