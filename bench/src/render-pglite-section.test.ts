import { describe, expect, it } from 'vitest';
import { renderPgliteSection } from './render-pglite-section.ts';
import type { PgliteLoopFigures, PglitePhaseResult } from './run-pglite-phase.ts';
import type { ModeSummary, SystemSummary } from './summarise-peer-comparison.ts';

function loop(flowsPerSecond: number): PgliteLoopFigures {
  return {
    warmupFlows: 5,
    flows: flowsPerSecond,
    windowMs: 1000,
    flowsPerSecond,
    latencyP50Ms: 1000 / flowsPerSecond,
    latencyP99Ms: 2000 / flowsPerSecond,
    nodeCpuMsPerFlow: 1,
  };
}

function pglite(store: PglitePhaseResult['store'], concurrency: number, flowsPerSecond: number): PglitePhaseResult {
  const settings = 'fsync=off, synchronous_commit=on';
  return {
    store,
    pid: 4242,
    concurrency,
    settings,
    ...loop(flowsPerSecond),
    nodeCpuMsPerFlow: 4,
    floor: loop(8 * flowsPerSecond),
  };
}

const one = (median: number) => ({ median, min: median, max: median, n: 1 });

function sagaflow(concurrency: number, flowsPerSecond: number): SystemSummary {
  return {
    system: 'Sagaflow',
    concurrency,
    rounds: 1,
    flowsPerSecond: one(flowsPerSecond),
    latencyP50Ms: one(20),
    latencyP99Ms: one(40),
    statementsPerFlow: null,
    commitsPerFlow: null,
    writeTransactionsPerFlow: null,
    nodeCpuMsPerFlow: one(10),
    postgresCpuMsPerFlow: one(5),
    walSyncsPerFlow: null,
    walSyncMs: null,
    executorMsPerFlow: null,
    coresBusy: null,
    r: null,
    statementsByLabel: [],
    poolCountersPerFlow: [],
  };
}

const durable: ModeSummary = {
  mode: 'durable',
  concurrencies: [1, 8],
  systems: [sagaflow(1, 50), sagaflow(8, 100)],
  ratios: [],
};

describe('renderPgliteSection', () => {
  it("shows each store's flows/s as a share of PostgreSQL's durable figure at the same concurrency", () => {
    const markdown = renderPgliteSection(
      [pglite('memory', 1, 100), pglite('memory', 8, 50), pglite('data-dir', 1, 25), pglite('data-dir', 8, 200)],
      [durable],
    );
    expect(markdown).toContain(
      '| PGlite in memory (fsync=off, synchronous_commit=on) | 100 (2.00×) | 10.0 / 20.0 | 4.0 | 50 (0.50×) |',
    );
    expect(markdown).toContain('| PGlite on a data directory (fsync=off, synchronous_commit=on) | 25 (0.50×) |');
    expect(markdown).toMatch(
      /PGlite in memory .*\n\| … floor on the same database: .* \| 800 \(16\.00×\) \| 1\.3 \/ 2\.5 \| 1\.0 \|/,
    );
    expect(markdown).toContain(
      '| PostgreSQL 15, durable commits (median of 1 round(s)) | 50 (1.00×) | 20.0 / 40.0 | 10.0 + 5.0 | 100 (1.00×) |',
    );
  });
});
