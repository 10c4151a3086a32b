import { describe, expect, it } from 'vitest';
import { openRunStatuses, terminalRunStatuses } from '../store/types.ts';
import { repairCatalogue } from './repair-catalogue.ts';
import { safeRepairsByStuckReason, safeRepairsFor } from './safe-repairs.ts';

describe('safeRepairsFor', () => {
  it.each([
    ['replay_blocked: step 3 is recorded as action "a" but ...', ['run.kick', 'run.resume_from_step', 'run.terminate']],
    ['unknown_flow: no flow named "x" is registered on this worker', ['run.kick', 'run.terminate']],
    [
      'unknown_action: compensation "undo" is not registered on this worker',
      ['run.kick', 'run.complete_step', 'run.terminate'],
    ],
    ['claim_not_committed: the claim of step 4 did not commit', ['run.kick', 'run.retry_step', 'run.terminate']],
    ['expiry_failed: past its business deadline, but ...', ['run.kick', 'run.resume_from_step', 'run.terminate']],
    [
      'owner_gone: step 2 (charge) held by worker w-1 which is gone since ...',
      ['run.kick', 'run.reclaim_step', 'run.terminate'],
    ],
    ['a_reason_from_a_newer_engine: ...', ['run.kick', 'run.terminate']],
  ])('a run stuck with "%s" may take %j', (reason, expected) => {
    expect(safeRepairsFor({ status: 'Waiting', stuckReason: reason })).toEqual(expected);
  });

  it('every stuck reason has a safe repair, and each names a run command of the catalogue', () => {
    for (const kinds of Object.values(safeRepairsByStuckReason)) {
      expect(kinds.length).toBeGreaterThan(0);
      for (const k of kinds) expect(repairCatalogue[k].target).not.toBe('instance');
    }
  });

  it('a finished run takes none; an open one the run commands', () => {
    for (const status of terminalRunStatuses) expect(safeRepairsFor({ status, stuckReason: null })).toEqual([]);
    for (const status of openRunStatuses)
      expect(safeRepairsFor({ status, stuckReason: null })).toEqual(
        expect.arrayContaining(['run.kick', 'run.cancel', 'run.terminate', 'run.signal']),
      );
  });
});
