import { fixed, markdownTable } from './markdown-table.ts';
import { percentile } from './percentile.ts';
import type { LatencyResult } from './run-latency-phase.ts';
import { summariseBreakdown, summariseStatements } from './summarise-breakdown.ts';

/** The latency section and "where the time goes", both from the back-to-back pool-of-one phase. */
export function renderBreakdown(latency: LatencyResult): string {
  const { cycleMs, rows } = summariseBreakdown(latency);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const latencyTable = markdownTable(
    ['latency of one run (ms)', 'p50', 'p99', 'mean', 'max'],
    [
      ['flow_runs.finished_at − created_at (engine-recorded)', ...stats(latency.dbLatencyMs)],
      [`startFlow() call → seen Completed (poll every ${latency.pollMs} ms)`, ...stats(latency.observedLatencyMs)],
    ].map(([label, ...cells]) => [label ?? '', ...cells]),
  );
  function stats(xs: number[]): string[] {
    return [fixed(percentile(xs, 50), 1), fixed(percentile(xs, 99), 1), fixed(mean(xs), 1), fixed(Math.max(...xs), 1)];
  }

  const timeTable = markdownTable(
    [
      'where (per run of 3 steps)',
      'per run',
      'mean ms',
      'ms per run',
      'ms per step',
      'share',
      'of which awaiting replies, ms/run',
    ],
    rows.map((r) => [
      r.where,
      fixed(r.perRun, 2),
      fixed(r.meanMs, 3),
      fixed(r.msPerRun, 2),
      fixed(r.msPerRun / 3, 2),
      `${fixed((100 * r.msPerRun) / cycleMs, 0)}%`,
      fixed(r.waitingMsPerRun, 2),
    ]),
  );
  const statementTable = markdownTable(
    ['statement', 'per run (driver)', 'per run (server)', 'round trip mean ms', 'server exec mean ms', 'variants'],
    summariseStatements(latency).map((s) => [
      s.label,
      fixed(s.driverCallsPerRun, 2),
      fixed(s.serverCallsPerRun, 2),
      fixed(s.roundTripMeanMs, 3),
      fixed(s.serverMeanMs, 3),
      s.variants === null ? '–' : String(s.variants),
    ]),
  );
  return [
    `## Latency of one run, and where its time goes (pool of 1, ${latency.flows} runs back to back after ${latency.warmup} warm-up runs)`,
    '',
    latencyTable,
    '',
    `Back to back, one run took ${fixed(cycleMs, 2)} ms of wall time (${fixed(cycleMs / 3, 2)} ms per step), ` +
      `during which this Node process used ${fixed(latency.cpuMsPerRun.node, 2)} ms of CPU and PostgreSQL ` +
      `${fixed(latency.cpuMsPerRun.postgres, 2)} ms (kernel accounting), while other processes on the machine ` +
      `kept ${fixed(latency.cpuMsPerRun.otherCores, 2)} cores busy. ` +
      'Transaction and statement times are client-observed: `pg.Client#query` is wrapped in this process ' +
      '(the engine builds its own pool, but it shares our `pg` module) and times each statement from call to reply; ' +
      'a transaction runs from BEGIN sent to COMMIT answered, so its time includes the engine/Prisma code between ' +
      'its statements ("awaiting replies" is the part spent waiting on the server). Run-level work (start, finish, ' +
      'job claim and delete) is included and divided over the 3 steps.',
    '',
    timeTable,
    '',
    'Statements by kind. "driver" counts what the engine sent; "server" counts pg_stat_statements rows for this ' +
      "database (the bench's own queries excluded by role); server exec time excludes network, parse/bind and " +
      'client time. "variants" is how many distinct normalised statements share the label.',
    '',
    statementTable,
  ].join('\n');
}
