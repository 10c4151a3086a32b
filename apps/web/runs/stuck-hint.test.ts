import { describe, expect, it } from 'vitest';
import { stuckHint } from './stuck-hint';

describe('stuckHint', () => {
  it.each([
    ['replay_blocked: step 3 is recorded as action "a" but…', 'replay_blocked', /matches the recorded history/],
    ['claim_not_committed: the claim of step 2 (x) did not commit', 'claim_not_committed', /listener/],
    ['unknown_flow: no flow named "x" is registered on this worker', 'unknown_flow', /Register the flow/],
    [
      'no_worker_for_version: demo.x v2 (worker w has v1); its wake waits for a worker with that version',
      'no_worker_for_version',
      /flow version/,
    ],
    ['unknown_action: compensation "x" is not registered on this worker', 'unknown_action', /Register the action/],
    ['owner_gone: step 5 (x) held by worker w which is gone since …', 'owner_gone', /reclaim the step/],
    ['expiry_failed: past its business deadline, but … (attempt 2): boom', 'expiry_failed', /hold-off ends/],
    [
      'expiry_failed: past its business deadline, but its expiry could not be written (attempt 1): the expiry did not finish within sweeps.transaction_timeout_ms (1000 ms): …',
      'expiry_failed',
      /raise the limit, or terminate the run/,
    ],
    [
      "run_held: another database session has held this run's row (or a row of it: a step, a child) since …",
      'run_held',
      /pg_stat_activity/,
    ],
  ])('a %s reason gets its code and a hint', (reason, code, hint) => {
    const result = stuckHint(reason);
    expect(result.code).toBe(code);
    expect(result.hint).toMatch(hint);
  });

  it('an unknown code is read but gets no hint', () => {
    expect(stuckHint('disk_on_fire: everything')).toEqual({ code: 'disk_on_fire', hint: null });
  });

  it('a reason without a code gets neither', () => {
    expect(stuckHint('something went wrong')).toEqual({ code: null, hint: null });
  });
});
