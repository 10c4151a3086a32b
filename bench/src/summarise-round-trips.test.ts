import { describe, expect, it } from 'vitest';
import {
  mergeIntervals,
  overlap,
  summariseRoundTrips,
  type RunTrace,
  type StatementKind,
  type StatementTrace,
} from './summarise-round-trips.ts';

const statement = (
  kind: StatementKind,
  runIds: string[],
  sentAt: number,
  connectedAt: number | null,
  doneAt: number | null,
): StatementTrace => ({ kind, runIds, sentAt, connectedAt, doneAt });

// Two 2-step flows: B's start waits 3 ms behind A's, and B's finish 1 ms behind A's; both share one transition.
const statements = [
  statement('start', ['A'], 1, 1.5, 4),
  statement('start', ['B'], 4.2, 4.3, 7),
  statement('transition', ['A', 'B'], 8, 8.5, 9),
  statement('finish', ['A'], 10, 10, 13),
  statement('finish', ['B'], 11, 11.2, 12),
  statement('other', [], 2, 2, 3),
];
const runs: RunTrace[] = [
  {
    runId: 'A',
    startCalledAt: 0,
    actions: [
      { inAt: 4.5, outAt: 4.6 },
      { inAt: 9.5, outAt: 9.6 },
    ],
    finishedAt: 14,
  },
  {
    runId: 'B',
    startCalledAt: 0.5,
    actions: [
      { inAt: 7.5, outAt: 7.6 },
      { inAt: 9.2, outAt: 9.3 },
    ],
    finishedAt: 12.5,
  },
];

describe('summariseRoundTrips', () => {
  it('splits each flow into segments that add up to its wall time, queued only while its kind was out', () => {
    const s = summariseRoundTrips(runs, statements);
    expect(s.flows).toBe(2);
    expect(s.irregular).toBe(0);
    expect(s.wallMsPerFlow).toBeCloseTo((14 + 12) / 2, 9);
    const sum = Object.values<number>({ ...s.perFlow }).reduce((a, b) => a + b, 0);
    expect(sum).toBeCloseTo(s.wallMsPerFlow, 9);
    // A never waited behind its kind; B waited 3 ms (start) + 1 ms (finish).
    expect(s.perFlow.queuedMs).toBeCloseTo(2, 9);
    expect(s.perFlow.nodeBeforeSendMs).toBeCloseTo((1 + 3.4 + 0.4 + 0.7 + 0.4 + 0.7) / 2, 9);
    expect(s.perFlow.poolWaitMs).toBeCloseTo((0.5 + 0.5 + 0 + 0.1 + 0.5 + 0.2) / 2, 9);
    expect(s.perFlow.wireMs).toBeCloseTo((2.5 + 0.5 + 3 + 2.7 + 0.5 + 0.8) / 2, 9);
    expect(s.perFlow.actionMs).toBeCloseTo(0.2, 9);
    expect(s.otherPerFlow).toBeCloseTo(0.5, 9);
  });

  it('reports per kind the runs each statement carried and how many were out at once', () => {
    const { kinds } = summariseRoundTrips(runs, statements);
    const byKind = Object.fromEntries(kinds.map((k) => [k.kind, k]));
    expect(byKind.transition).toMatchObject({ statements: 1, perFlow: 0.5, itemsPerStatement: 2, maxItems: 2 });
    expect(byKind.transition!.meanInFlight).toBeCloseTo(1, 9);
    expect(byKind.start!.meanInFlight).toBeCloseTo((3 + 2.8) / 6, 9);
    expect(byKind.start!.segments.queuedMs).toBeCloseTo(1.5, 9);
    expect(byKind.finish!.segments.queuedMs).toBeCloseTo(0.5, 9);
  });

  it('leaves out a flow whose statements are not the hot path’s shape', () => {
    const retried = [
      ...statements,
      statement('start', ['C'], 20, 20, 21),
      statement('transition', ['C'], 22, 22, 23),
      statement('transition', ['C'], 24, 24, 25),
      statement('finish', ['C'], 26, 26, 27),
      statement('start', ['D'], 20, 20, null),
    ];
    const twoMore: RunTrace[] = [
      ...runs,
      { runId: 'C', startCalledAt: 19, actions: runs[0]!.actions, finishedAt: 28 },
      { runId: 'D', startCalledAt: 19, actions: [], finishedAt: 28 },
    ];
    const s = summariseRoundTrips(twoMore, retried);
    expect(s.flows).toBe(2);
    expect(s.irregular).toBe(2);
    expect(s.wallMsPerFlow).toBeCloseTo(13, 9);
  });
});

describe('overlap', () => {
  it('measures how much of a window the merged intervals cover', () => {
    const merged = mergeIntervals([
      statement('start', [], 5, 5, 7),
      statement('start', [], 1, 1, 3),
      statement('start', [], 2, 2, 4),
      statement('start', [], 9, 9, null),
    ]);
    expect(merged).toEqual([
      [1, 4],
      [5, 7],
    ]);
    expect(overlap(merged, 0, 10)).toBe(5);
    expect(overlap(merged, 3, 6)).toBe(2);
    expect(overlap(merged, 4, 5)).toBe(0);
    expect(overlap(merged, 7.5, 9)).toBe(0);
  });
});
