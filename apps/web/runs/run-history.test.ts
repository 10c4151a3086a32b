import { describe, expect, it } from 'vitest';
import type { RunChanges, RunDetail, StepRow } from '@/trpc/api-types';
import { heldInput, mergeChanges, withOlderSteps } from './run-history';

const step = (sequence: number, status = 'Completed'): StepRow =>
  ({ id: `s-${sequence}`, sequence, status, name: `line-${sequence}` }) as StepRow;
const event = (id: number) => ({ id: String(id), type: 'StepCompleted', sequence: null, data: {}, at: '' });
const run = { id: 'r', status: 'Running' } as RunDetail['run'];

const head = (steps: StepRow[], events: number[]): RunDetail =>
  ({
    run,
    actions: steps,
    compensations: [],
    events: events.map(event),
    anomalies: [],
    older: { steps: true, compensations: false, events: true },
    timing: {},
  }) as unknown as RunDetail;

const changes = (c: Partial<RunChanges>): RunChanges => ({
  run,
  newSteps: { rows: [], more: false },
  openSteps: [],
  newEvents: { rows: [], more: false },
  newCompensations: { rows: [], more: false },
  openCompensations: [],
  newAnomalies: [],
  heldFrom: { steps: null, events: null },
  ...c,
});

describe('a run page’s held history (ADR 0035)', () => {
  it('asks for what is newer than the newest held, counts from the oldest, and re-reads open steps', () => {
    const h = head([step(9), step(10, 'Running')], [99, 100]);
    expect(heldInput(h)).toEqual({
      id: 'r',
      steps: { after: 10, from: 9, open: [10] },
      events: { after: '100', from: '99' },
      compensations: { open: [] },
      anomalies: {},
    });
  });

  it('merges new and refreshed rows once each, in bigint order across digit boundaries', () => {
    const h = head([step(9), step(10, 'Running')], [99, 100]);
    const sent = heldInput(h);
    const { history, missed } = mergeChanges(
      h,
      sent,
      changes({
        newSteps: { rows: [step(11)], more: false },
        openSteps: [step(10)],
        newEvents: { rows: [event(101), event(1000)], more: false },
        heldFrom: { steps: 3, events: 4 },
      }),
    );
    expect(history.actions.map((s) => [s.sequence, s.status])).toEqual([
      [9, 'Completed'],
      [10, 'Completed'],
      [11, 'Completed'],
    ]);
    expect(history.events.map((e) => e.id)).toEqual(['99', '100', '101', '1000']);
    expect(missed).toBe(false);
  });

  it('says a row was missed when the server counts more from the oldest held than the page holds', () => {
    const h = head([step(9)], [99, 101]);
    const { missed } = mergeChanges(h, heldInput(h), changes({ heldFrom: { steps: 1, events: 3 } }));
    expect(missed).toBe(true);
  });

  it('an older page lands before the held rows and says whether more remain', () => {
    const h = withOlderSteps(head([step(51), step(52)], []), { rows: [step(50), step(49)], more: false });
    expect(h.actions.map((s) => s.sequence)).toEqual([49, 50, 51, 52]);
    expect(h.older.steps).toBe(false);
  });
});
