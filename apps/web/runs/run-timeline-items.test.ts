import { describe, expect, it } from 'vitest';
import { runTimeline } from './run-timeline-items';

const step = (sequence: number, parallelBlock: number | null, kind = 'action') => ({
  sequence,
  kind,
  name: `s${sequence}`,
  status: 'Completed',
  attempts: 1,
  maxAttempts: 3,
  parallelBlock,
  startedAt: null,
  finishedAt: null,
  wakeAt: null,
});
const event = (id: string, type: string, sequence: number | null, data: unknown = {}) => ({
  id,
  type,
  sequence,
  at: `2026-01-01T00:00:0${id}Z`,
  data,
});

describe('runTimeline', () => {
  it('places events, anomalies and compensations on their step and groups a parallel block', () => {
    const t = runTimeline({
      actions: [step(1, null), step(2, null, 'value'), step(3, 7), step(4, 7), step(5, null)],
      compensations: [
        { id: 'c1', actionSequence: 1, rollbackLevel: 1, name: 'undo', status: 'Completed', attempts: 1 },
      ],
      events: [event('1', 'action.started', 1), event('2', 'action.failed', 1), event('3', 'run.kicked', null)],
      anomalies: [{ id: 'a', code: 'claim_lost', message: 'm', sequence: 3, at: '2026-01-01T00:00:04Z' }],
    });
    expect(t.groups.map((g) => [g.block, g.steps.map((s) => s.step.sequence)])).toEqual([
      [null, [1]],
      [7, [3, 4]],
      [null, [5]],
    ]);
    expect(t.groups[0]?.steps[0]?.events.map((e) => e.type)).toEqual(['action.started', 'action.failed']);
    expect(t.groups[0]?.steps[0]?.compensations.map((c) => c.name)).toEqual(['undo']);
    expect(t.groups[1]?.steps[0]?.anomalies.map((a) => a.code)).toEqual(['claim_lost']);
    expect(t.runEvents.map((e) => e.type)).toEqual(['run.kicked']);
  });

  it('pairs run.stuck with the run.unstuck that ended it; an unpaired one is still stuck', () => {
    const t = runTimeline({
      actions: [],
      compensations: [],
      anomalies: [],
      events: [
        event('1', 'run.stuck', null, { reason: 'owner_gone: w1' }),
        event('2', 'run.unstuck', null, { reason: 'owner_gone: w1', by: 'kick' }),
        event('3', 'run.stuck', null, { reason: 'replay_blocked: step 2' }),
      ],
    });
    expect(t.stuckPeriods).toEqual([
      { reason: 'owner_gone: w1', at: '2026-01-01T00:00:01Z', endedAt: '2026-01-01T00:00:02Z', endedBy: 'kick' },
      { reason: 'replay_blocked: step 2', at: '2026-01-01T00:00:03Z', endedAt: null, endedBy: null },
    ]);
  });

  it('tells every stuck episode once: the old ones runs.get carried apart and a new one among the events held', () => {
    const old = [
      event('1', 'run.stuck', null, { reason: 'owner_gone: w1' }),
      event('2', 'run.unstuck', null, { by: 'kick' }),
    ];
    const t = runTimeline({
      actions: [],
      compensations: [],
      anomalies: [],
      stuckEvents: [...old, event('5', 'run.stuck', null, { reason: 'replay_blocked: step 9' })],
      // The page of events held starts after the first episode; a poll brought the second's end.
      events: [
        event('4', 'action.started', 3),
        event('5', 'run.stuck', null, { reason: 'replay_blocked: step 9' }),
        event('6', 'run.unstuck', null, { by: 'kick' }),
      ],
    });
    expect(t.stuckPeriods).toEqual([
      { reason: 'owner_gone: w1', at: '2026-01-01T00:00:01Z', endedAt: '2026-01-01T00:00:02Z', endedBy: 'kick' },
      {
        reason: 'replay_blocked: step 9',
        at: '2026-01-01T00:00:05Z',
        endedAt: '2026-01-01T00:00:06Z',
        endedBy: 'kick',
      },
    ]);
  });
});
