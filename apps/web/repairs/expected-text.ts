import type { DraftCommand } from './repair-draft-types';

const expectedLabels: Record<string, string> = {
  runStatus: 'status',
  stepStatus: 'step status',
  stepAttempts: 'step attempts',
  state: 'state',
  version: 'version',
  instanceStatus: 'status',
  status: 'status',
  attempts: 'attempts',
};

/** A target's state as a repair sees it (expected or actual), in words: "state ManualReview, version 4". */
export const expectedText = (expected: DraftCommand['expected']) =>
  Object.entries(expected)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${expectedLabels[k] ?? k} ${String(v)}`)
    .join(', ');
