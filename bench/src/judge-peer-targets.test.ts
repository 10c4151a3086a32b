import { describe, expect, it } from 'vitest';
import {
  judgePeerTargets,
  rBoundAtOneClient,
  renderManyClientCores,
  renderOneClientTime,
  renderPeerTargets,
} from './judge-peer-targets.ts';
import { peerPhase } from './peer-phase-fixture.ts';
import type { Ceiling } from './run-pgbench-ceiling.ts';
import { summariseMode } from './summarise-peer-comparison.ts';

const ceilings: Ceiling[] = [
  { clients: 1, tps: 2000, transactions: 10_000, command: 'pgbench -c 1' },
  { clients: 4, tps: 5000, transactions: 25_000, command: 'pgbench -c 4' },
];

/** Three rounds at c = 1 and 8: DBOS steady, Sagaflow's figures as given. */
function summary(ours: { c1: number; c8: number; nodeCpu: number; statements: number }) {
  const phases = [1, 2, 3].flatMap((round) => [
    peerPhase({ system: 'DBOS', round, concurrency: 1, flowsPerSecond: 100, latencyP50Ms: 10, latencyP99Ms: 20 }),
    peerPhase({ system: 'DBOS', round, concurrency: 8, flowsPerSecond: 200, nodeCpuMsPerFlow: 3 }),
    peerPhase({
      system: 'Sagaflow',
      round,
      concurrency: 1,
      flowsPerSecond: ours.c1,
      latencyP50Ms: 4,
      latencyP99Ms: 45,
      commitsPerFlow: 4,
      statementsPerFlow: ours.statements,
      nodeCpuMsPerFlow: ours.nodeCpu,
    }),
    peerPhase({
      system: 'Sagaflow',
      round,
      concurrency: 8,
      flowsPerSecond: ours.c8,
      statementsPerFlow: 2,
      writeTransactionsPerFlow: 2,
      nodeCpuMsPerFlow: ours.nodeCpu,
      postgresCpuMsPerFlow: 1,
    }),
  ]);
  return summariseMode(phases, 'durable', 5000);
}

const verdict = (s: ReturnType<typeof summary>, target: string) => judgePeerTargets(s).find((v) => v.target === target);

describe('judgePeerTargets', () => {
  it('says a target is missed and by what factor, and met where the figure reaches it', () => {
    const s = summary({ c1: 250, c8: 450, nodeCpu: 1.5, statements: 9 });
    expect(verdict(s, 'flows/s ≥ 1× DBOS at c=1')).toMatchObject({ met: true, measured: '2.50', shortBy: '' });
    // 450 ÷ 200 = 2.25: it needs 3 ÷ 2.25 = 1.33× more.
    expect(verdict(s, 'flows/s ≥ 3× DBOS at c=8')).toMatchObject({
      met: false,
      measured: '2.25',
      shortBy: 'needs 1.33×',
    });
    expect(verdict(s, "p50 ≤ DBOS's at c=1 (ratio)")).toMatchObject({ met: true, measured: '0.40' });
    // 45 ÷ 20 = 2.25 > 2.
    expect(verdict(s, "p99 ≤ 2× DBOS's at c=1 (ratio)")).toMatchObject({ met: false, shortBy: 'must fall 1.13×' });
    expect(verdict(s, 'statements / flow ≤ 8 at c=1')).toMatchObject({ met: false, measured: '9.0' });
    expect(verdict(s, 'statements / flow ≤ 8 at c=8')).toMatchObject({ met: true });
    // 2 writing transactions at c=8; at c=1 the fixture's 5.
    expect(verdict(s, 'writing tx / flow ≤ 4 at c=1')).toMatchObject({ met: false, measured: '5.00' });
    // 1.5 ÷ 1 at c=1 (DBOS's default 1 ms) is far above 1/3; 1.5 ÷ 3 at c=8 = 0.5 is above it too.
    expect(verdict(s, "Node CPU / flow ≤ 1/3 of DBOS's at c=8 (ratio)")).toMatchObject({
      met: false,
      measured: '0.50',
      shortBy: 'must fall 1.50×',
    });
    expect(verdict(s, "PostgreSQL CPU / flow ≤ DBOS's at c=8 (ratio)")).toMatchObject({ met: true, measured: '0.50' });
    // R = 450 × 3 ÷ 5000 = 0.27 at c=8.
    expect(verdict(s, 'R ≥ 0.30 at c=8')).toMatchObject({ met: false, measured: '0.270', shortBy: 'needs 1.11×' });
  });

  it('turns a missed target into a met one when the figure moves past it', () => {
    const s = summary({ c1: 250, c8: 700, nodeCpu: 0.9, statements: 4 });
    expect(verdict(s, 'flows/s ≥ 3× DBOS at c=8')).toMatchObject({ met: true, measured: '3.50' });
    expect(verdict(s, "Node CPU / flow ≤ 1/3 of DBOS's at c=8 (ratio)")).toMatchObject({ met: true });
    expect(verdict(s, 'R ≥ 0.30 at c=8')).toMatchObject({ met: true, measured: '0.420' });
  });

  it('leaves a target unjudged when the run has no figure for it', () => {
    const s = summariseMode([peerPhase({ system: 'Sagaflow', round: 1, concurrency: 1 })], 'durable', null);
    expect(verdict(s, 'flows/s ≥ 1× DBOS at c=1')).toMatchObject({ met: null, measured: '–' });
    expect(verdict(s, 'R ≥ 0.30 at c=1')).toMatchObject({ met: null });
  });
});

describe('rBoundAtOneClient', () => {
  it('is the R one client reaches if each sequential commit cost one 1-client pgbench transaction', () => {
    // 2000 tps ÷ 4 commits = 500 flows/s; × 3 steps ÷ 5000 = 0.30.
    expect(rBoundAtOneClient(summary({ c1: 250, c8: 450, nodeCpu: 1, statements: 4 }), ceilings)).toBeCloseTo(0.3, 6);
    expect(rBoundAtOneClient(summary({ c1: 250, c8: 450, nodeCpu: 1, statements: 4 }), [])).toBeNull();
  });

  it('is printed under the targets table', () => {
    const text = renderPeerTargets(summary({ c1: 250, c8: 450, nodeCpu: 1, statements: 4 }), ceilings);
    expect(text).toContain('| flows/s ≥ 3× DBOS at c=8 | 2.25 | no | needs 1.33× |');
    // This run's c=1: 250 × 3 ÷ 5000 = 0.15, half the ceiling.
    expect(text).toContain('c=1 would reach R = 0.300, of which this run reached 50 %.');
  });
});

describe('renderOneClientTime', () => {
  const atOneClient = (walSyncMs: number) =>
    summariseMode(
      [1, 2, 3].flatMap((round) => [
        peerPhase({ system: 'DBOS', round, concurrency: 1, flowsPerSecond: 100, walSyncsPerFlow: 5, walSyncMs }),
        peerPhase({
          system: 'Sagaflow',
          round,
          concurrency: 1,
          flowsPerSecond: 250,
          walSyncsPerFlow: 4,
          walSyncMs,
          postgresCpuMsPerFlow: 1.5,
          executorMsPerFlow: 0.9,
          nodeCpuMsPerFlow: 1.25,
        }),
      ]),
      'durable',
      5000,
    );

  it('splits a one-client flow into its flushes, PostgreSQL and Node, and says what R ≥ 0.30 leaves for the CPU', () => {
    const text = renderOneClientTime(atOneClient(0.35), ceilings);
    expect(text).toContain("| c=1, where a flow's time goes (medians) | Sagaflow | DBOS |");
    expect(text).toContain('| time per flow (1 ÷ flows/s), ms | 4.00 | 10.00 |');
    expect(text).toContain('| flushes × ms per flush, ms | 1.40 | 1.75 |');
    expect(text).toContain('| in the executor (pg_stat_statements, wall time), ms | 0.90 | 1.00 |');
    // 3 steps ÷ (0.30 × 5000 tps) = 2 ms per flow; 4 flushes of 0.35 ms leave 0.60 ms for 2.75 ms of CPU.
    expect(text).toContain('R ≥ 0.30 at c=1 needs a flow every 2.00 ms.');
    expect(text).toContain('take 1.40 ms of a flow');
    expect(text).toContain('leaves 0.60 ms for the CPU of its statements and steps; they take 2.75 ms now');
    // 1000 ÷ 1.4 flows/s × 3 ÷ 5000.
    expect(text).toContain('cap R at c=1 at 0.429.');
  });

  it("reads Node CPU at c=1 against the floor's (ADR 0090): its column, what is above it, and what the target leaves", () => {
    const withFloor = (floorCpu: number) =>
      summariseMode(
        [1, 2, 3].flatMap((round) => [
          peerPhase({ system: 'DBOS', round, concurrency: 1, nodeCpuMsPerFlow: 6 }),
          peerPhase({ system: 'Sagaflow', round, concurrency: 1, nodeCpuMsPerFlow: 2.5 }),
          peerPhase({ system: 'Floor', round, concurrency: 1, nodeCpuMsPerFlow: floorCpu }),
        ]),
        'durable',
        5000,
      );
    const text = renderOneClientTime(withFloor(1.5), ceilings);
    expect(text).toContain("| c=1, where a flow's time goes (medians) | Sagaflow | DBOS | floor (ADR 0090) |");
    expect(text).toContain('| Node CPU / flow, ms | 2.50 | 6.00 | 1.50 |');
    expect(text).toContain(
      "took 1.50 ms per flow, 0.25 of DBOS's 6.00 ms. Sagaflow took 2.50 ms, 1.00 ms above the floor.",
    );
    expect(text).toContain("is 2.00 ms: 0.50 ms above the floor for the engine's own work.");
    expect(renderOneClientTime(withFloor(2.2), ceilings)).toContain(
      'is 2.00 ms: below the floor, so no engine that commits four times per flow through this driver meets it',
    );
    expect(renderOneClientTime(atOneClient(0.35), ceilings)).not.toContain('the floor');
  });

  it('says when the flushes alone take longer than the target allows', () => {
    expect(renderOneClientTime(atOneClient(0.6), ceilings)).toContain('which leaves nothing for the CPU');
  });

  it('prints nothing without a one-client phase or a 4-client ceiling, and no sentence without flushes', () => {
    expect(renderOneClientTime(atOneClient(0.35), [])).toBe('');
    const noFlushes = summariseMode(
      [peerPhase({ system: 'Sagaflow', round: 1, concurrency: 1, walSyncsPerFlow: 0, walSyncMs: null })],
      'fsync-off',
      5000,
    );
    expect(renderOneClientTime(noFlushes, ceilings)).not.toContain('needs a flow every');
  });
});

describe('renderManyClientCores', () => {
  it('says, where c=8 is short of 3× DBOS, the cores busy and the two ways to the target', () => {
    // Sagaflow at c=8: 450 flows/s × (1 ms Node + 1 ms PostgreSQL) = 0.90 cores; DBOS 200 × (3 + 2) = 1.00.
    const text = renderManyClientCores(summary({ c1: 250, c8: 450, nodeCpu: 1, statements: 4 }));
    expect(text).toContain('At c=8 Sagaflow kept 0.90 cores busy for 450 flows/s (2.00 ms of CPU per flow');
    expect(text).toContain('DBOS 1.00.');
    // 3 × 200 = 600 flows/s: 600 × 2 ms = 1.20 cores, or 0.90 cores ÷ 600 flows/s = 1.50 ms per flow.
    expect(text).toContain('3× DBOS is 600 flows/s: at this CPU per flow that takes 1.20 cores busy');
    expect(text).toContain('and on 0.90 cores it takes 1.50 ms of CPU per flow.');
    expect(renderPeerTargets(summary({ c1: 250, c8: 450, nodeCpu: 1, statements: 4 }), ceilings)).toContain(text);
  });

  it('prints nothing where the target is met', () => {
    expect(renderManyClientCores(summary({ c1: 250, c8: 650, nodeCpu: 1, statements: 4 }))).toBe('');
  });
});
