import { describe, expect, it } from 'vitest';
import type { CompensationRow, StepRow } from '@/trpc/api-types';
import { stepChoices } from './step-choices';

const step = { sequence: 1, name: 'charge', status: 'Completed', attempts: 1 } as StepRow;
const refund = {
  actionSequence: 1,
  rollbackLevel: 1,
  ordinal: 0,
  name: 'refund',
  status: 'Running',
  attempts: 1,
} as CompensationRow;

describe('stepChoices', () => {
  it('a reclaim offers the compensations beside the steps, each drafted against its own row', () => {
    const choices = stepChoices('run.reclaim_step', 'r1', [step], [refund]);
    expect(choices.map((c) => c.label)).toEqual([
      '#1 charge (Completed, 1 attempt)',
      'rollback 1.0: refund, undoing #1 (Running, 1 attempt)',
    ]);
    expect(choices[1]).toMatchObject({
      value: 'compensation:1.0',
      target: { runId: 'r1', compensation: { rollbackLevel: 1, ordinal: 0 } },
      expected: { stepStatus: 'Running', stepAttempts: 1 },
    });
  });

  it('the other step commands act on steps only', () => {
    for (const kind of ['run.retry_step', 'run.complete_step', 'run.resume_from_step'])
      expect(stepChoices(kind, 'r1', [step], [refund]).map((c) => c.target)).toEqual([
        { runId: 'r1', stepSequence: 1 },
      ]);
  });
});
