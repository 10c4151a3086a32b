import { describe, expect, it } from 'vitest';
import { describeCurrent, redraftAgainst } from './redraft';
import type { DraftCommand } from './repair-draft-types';

const runDraft: DraftCommand = {
  kind: 'run.kick',
  target: { runId: 'r1' },
  expected: { runStatus: 'Waiting' },
  idempotencyKey: 'k1',
  params: {},
};

describe('redraftAgainst', () => {
  it('an outbox requeue is redrafted against the Dead row now, and not at all once the row is Pending or Published', () => {
    const requeue: DraftCommand = {
      kind: 'outbox.requeue',
      target: { outboxId: 'o1' },
      expected: { status: 'Dead', attempts: 3 },
      idempotencyKey: 'k1',
      params: {},
    };
    const outbox = { type: 'ReserveInventory', destination: 'inventory' };
    const next = redraftAgainst(requeue, { exists: true, outbox, status: 'Dead', attempts: 5 });
    expect(next).toMatchObject({ kind: 'outbox.requeue', expected: { status: 'Dead', attempts: 5 } });
    expect(next?.idempotencyKey).not.toBe('k1');
    expect(redraftAgainst(requeue, { exists: true, outbox, status: 'Pending', attempts: 0 })).toBeNull();
    expect(redraftAgainst(requeue, { exists: true, outbox, status: 'Published', attempts: 1 })).toBeNull();
    expect(describeCurrent({ exists: true, outbox, status: 'Pending', attempts: 0 })).toBe(
      'Pending after 0 attempt(s)',
    );
  });

  it('a run command is redrafted against the status now, with a new key and the same parameters', () => {
    const next = redraftAgainst(
      { ...runDraft, kind: 'run.signal', params: { signal: { name: 'go' } } },
      { exists: true, runStatus: 'Running', stuckReason: null },
    );
    expect(next).toMatchObject({
      kind: 'run.signal',
      expected: { runStatus: 'Running' },
      params: { signal: { name: 'go' } },
    });
    expect(next?.idempotencyKey).not.toBe('k1');
  });

  it('a step command takes the step status and attempts now', () => {
    const next = redraftAgainst(
      { ...runDraft, kind: 'run.retry_step', target: { runId: 'r1', stepSequence: 2 } },
      { exists: true, runStatus: 'Waiting', stuckReason: null, step: { status: 'Failed', attempts: 3 } },
    );
    expect(next?.expected).toEqual({ runStatus: 'Waiting', stepStatus: 'Failed', stepAttempts: 3 });
  });

  it('a compensation command takes the compensation status and attempts now', () => {
    const next = redraftAgainst(
      {
        ...runDraft,
        kind: 'run.reclaim_step',
        target: { runId: 'r1', compensation: { rollbackLevel: 1, ordinal: 0 } },
      },
      { exists: true, runStatus: 'Compensating', stuckReason: null, step: { status: 'Running', attempts: 2 } },
    );
    expect(next?.target).toEqual({ runId: 'r1', compensation: { rollbackLevel: 1, ordinal: 0 } });
    expect(next?.expected).toEqual({ runStatus: 'Compensating', stepStatus: 'Running', stepAttempts: 2 });
  });

  it('an instance command takes the state and version now', () => {
    const next = redraftAgainst(
      {
        ...runDraft,
        kind: 'instance.command',
        target: { instanceId: 'i1' },
        expected: { state: 'ManualReview', version: 3 },
      },
      { exists: true, state: 'ManualReview', status: 'ACTIVE', version: 4 },
    );
    expect(next?.expected).toEqual({ state: 'ManualReview', version: 4 });
  });

  it('a finished or missing run cannot be redrafted: a terminal state is never changed', () => {
    expect(redraftAgainst(runDraft, { exists: true, runStatus: 'Terminated', stuckReason: null })).toBeNull();
    expect(redraftAgainst(runDraft, { exists: false })).toBeNull();
    expect(redraftAgainst(runDraft, null)).toBeNull();
  });

  it('describes the state now in words', () => {
    expect(describeCurrent({ exists: true, runStatus: 'Waiting', stuckReason: 'owner_gone: x' })).toBe(
      'Waiting (stuck: owner_gone: x)',
    );
    expect(describeCurrent({ exists: true, state: 'Refunding', status: 'QUARANTINED', version: 2 })).toBe(
      'Refunding (QUARANTINED), version 2',
    );
  });
});
