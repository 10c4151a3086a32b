import { describe, expect, it } from 'vitest';
import type { WorkerPoolCounters } from '@sagaflow/engine';
import { peerPhase as phase } from './peer-phase-fixture.ts';
import type { PeerPhaseResult } from './run-peer-phase.ts';
import { median, spread, summariseMode } from './summarise-peer-comparison.ts';

function poolCounters(claims: number, handOffs: number): WorkerPoolCounters {
  return {
    claims,
    emptyClaims: 0,
    jobsClaimed: claims,
    jobsGivenBack: 0,
    looks: 0,
    looksFindingWork: 0,
    handOffs,
    handOffsRefused: { stopped: 0, full: 0, queued: claims, stale: 0 },
    notifications: { own: claims, others: 1 },
    polls: 0,
    slotsTaken: 0,
  };
}

describe('median and spread', () => {
  it('takes the middle value of an odd count and the mean of the two middle ones of an even count', () => {
    expect(median([9, 1, 5])).toBe(5);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('leaves out figures the run could not read, and is null when none is left', () => {
    expect(spread([3, null, 1, Number.NaN, 2])).toEqual({ median: 2, min: 1, max: 3, n: 3 });
    expect(spread([null, null])).toBeNull();
  });
});

describe('summariseMode', () => {
  // Three rounds at c=8 in which the machine drifts: DBOS and Sagaflow slow down together.
  const results: PeerPhaseResult[] = [
    phase({ system: 'Sagaflow', round: 1, concurrency: 8, flowsPerSecond: 50, latencyP50Ms: 40, latencyP99Ms: 90 }),
    phase({ system: 'DBOS', round: 1, concurrency: 8, flowsPerSecond: 200, latencyP50Ms: 10, latencyP99Ms: 30 }),
    phase({ system: 'Sagaflow', round: 2, concurrency: 8, flowsPerSecond: 30, latencyP50Ms: 60, latencyP99Ms: 120 }),
    phase({ system: 'DBOS', round: 2, concurrency: 8, flowsPerSecond: 100, latencyP50Ms: 20, latencyP99Ms: 60 }),
    phase({ system: 'Sagaflow', round: 3, concurrency: 8, flowsPerSecond: 40, latencyP50Ms: 50, latencyP99Ms: 100 }),
    phase({ system: 'DBOS', round: 3, concurrency: 8, flowsPerSecond: 80, latencyP50Ms: 25, latencyP99Ms: 40 }),
    // Another mode and a round with only one system: neither may leak into the ratios.
    phase({ system: 'Sagaflow', round: 1, concurrency: 8, mode: 'fsync-off', flowsPerSecond: 1000 }),
    phase({ system: 'Sagaflow', round: 4, concurrency: 8, flowsPerSecond: 45 }),
  ];

  it('takes the Sagaflow ÷ DBOS ratio within each round, then its median and extremes', () => {
    const [ratio] = summariseMode(results, 'durable', 1000).ratios;
    expect(ratio?.perRound.map((r) => r.round)).toEqual([1, 2, 3]);
    expect(ratio?.perRound.map((r) => r.flowsPerSecond)).toEqual([0.25, 0.3, 0.5]);
    expect(ratio?.flowsPerSecond).toEqual({ median: 0.3, min: 0.25, max: 0.5, n: 3 });
    expect(ratio?.perRound.map((r) => r.latencyP50)).toEqual([4, 3, 2]);
    expect(ratio?.latencyP50?.median).toBe(3);
    expect(ratio?.latencyP99).toEqual({ median: 2.5, min: 2, max: 3, n: 3 });
  });

  it('summarises each system over its own rounds of the mode, and R against the 4-client tps', () => {
    const summary = summariseMode(results, 'durable', 1000);
    expect(summary.concurrencies).toEqual([8]);
    const ours = summary.systems.find((s) => s.system === 'Sagaflow');
    const theirs = summary.systems.find((s) => s.system === 'DBOS');
    expect(ours?.rounds).toBe(4);
    expect(ours?.flowsPerSecond).toEqual({ median: 42.5, min: 30, max: 50, n: 4 });
    expect(theirs?.flowsPerSecond).toEqual({ median: 100, min: 80, max: 200, n: 3 });
    // R = steps/s ÷ tps = 3 × flows/s ÷ 1000.
    expect(theirs?.r?.median).toBeCloseTo(0.3, 10);
    expect(theirs?.r?.max).toBeCloseTo(0.6, 10);
  });

  it('counts statements per flow by label over warm-up and measured flows, a label missing from a round as 0', () => {
    const withStatements = [
      phase({
        system: 'DBOS',
        round: 1,
        concurrency: 1,
        warmupFlows: 10,
        flows: 90,
        statements: [
          { label: 'BEGIN', calls: 500, execMs: 0, variants: 1 },
          { label: 'LISTEN x', calls: 3, execMs: 0, variants: 1 },
        ],
      }),
      phase({
        system: 'DBOS',
        round: 2,
        concurrency: 1,
        warmupFlows: 0,
        flows: 200,
        statements: [{ label: 'BEGIN', calls: 1200, execMs: 0, variants: 1 }],
      }),
      phase({ system: 'DBOS', round: 3, concurrency: 1, flows: 100, warmupFlows: 0, statements: [] }),
    ];
    const [dbos] = summariseMode(withStatements, 'durable', null).systems;
    expect(dbos?.statementsByLabel).toEqual([
      ['BEGIN', 5],
      ['LISTEN x', 0],
    ]);
  });

  it('reports no R when the ceiling is unknown', () => {
    expect(summariseMode(results, 'durable', null).systems.every((s) => s.r === null)).toBe(true);
  });
});

describe("Sagaflow's worker pool counters", () => {
  it('are divided by every flow of a phase (warm-up included) and summarised as the median over rounds', () => {
    const summary = summariseMode(
      [
        phase({ system: 'Sagaflow', round: 1, concurrency: 8, poolCounters: poolCounters(11, 99) }),
        phase({ system: 'Sagaflow', round: 2, concurrency: 8, poolCounters: poolCounters(55, 55) }),
        phase({ system: 'Sagaflow', round: 3, concurrency: 8, poolCounters: poolCounters(33, 77) }),
        phase({ system: 'DBOS', round: 1, concurrency: 8 }),
      ],
      'durable',
      null,
    );
    const [sagaflow, dbos] = summary.systems;
    const perFlow = new Map(sagaflow?.poolCountersPerFlow);
    expect(perFlow.get('job claims')).toBeCloseTo(0.3);
    expect(perFlow.get('hand-offs')).toBeCloseTo(0.7);
    expect(perFlow.get("notifications heard: others'")).toBeCloseTo(1 / 110);
    expect(dbos?.poolCountersPerFlow).toEqual([]);
  });
});
