import type { LatencyResult } from './run-latency-phase.ts';

/** One line of "where the time goes", per run of three steps. */
export interface BreakdownRow {
  readonly where: string;
  /** How many times it happened per run. */
  readonly perRun: number;
  readonly meanMs: number;
  readonly msPerRun: number;
  /** Of `msPerRun`, the time spent waiting for statement replies (null where that does not apply). */
  readonly waitingMsPerRun: number | null;
}

/** One statement kind, as the driver and the server each saw it. */
export interface StatementRow {
  readonly label: string;
  readonly driverCallsPerRun: number;
  readonly serverCallsPerRun: number | null;
  readonly roundTripMeanMs: number;
  readonly serverMeanMs: number | null;
  readonly variants: number | null;
}

/**
 * Splits the back-to-back cycle time of one run into the transactions and lone statements the
 * driver saw, the actions' bodies, and what is left: time in no statement at all.
 */
export function summariseBreakdown(latency: LatencyResult): { cycleMs: number; rows: BreakdownRow[] } {
  const runs = latency.flows;
  const cycleMs = latency.loopMs / runs;
  const shapes = new Map<string, { count: number; ms: number; waitingMs: number }>();
  for (const tx of latency.driver.transactions) {
    const key = tx.labels.map(shortLabel).join(' → ');
    const shape = shapes.get(key) ?? { count: 0, ms: 0, waitingMs: 0 };
    shape.count += 1;
    shape.ms += tx.ms;
    shape.waitingMs += tx.roundTripMs;
    shapes.set(key, shape);
  }
  const rows: BreakdownRow[] = [
    ...[...shapes].map(([shape, s]) => ({
      where: `transaction: BEGIN → ${shape}`,
      perRun: s.count / runs,
      meanMs: s.ms / s.count,
      msPerRun: s.ms / runs,
      waitingMsPerRun: s.waitingMs / runs,
    })),
    ...[...latency.driver.autocommit].map(([label, t]) => ({
      where: `statement on its own: ${label}`,
      perRun: t.calls / runs,
      meanMs: t.ms / t.calls,
      msPerRun: t.ms / runs,
      waitingMsPerRun: t.ms / runs,
    })),
  ].sort((a, b) => b.msPerRun - a.msPerRun);
  rows.push({
    where: 'inside the actions (the no-op bodies)',
    perRun: 3,
    meanMs: latency.actionMs / (runs * 3),
    msPerRun: latency.actionMs / runs,
    waitingMsPerRun: null,
  });
  const accounted = rows.reduce((sum, r) => sum + r.msPerRun, 0);
  rows.push({
    where: `in no statement: engine and Prisma code between transactions, worker hand-offs, the bench's ${latency.pollMs} ms completion poll`,
    perRun: 1,
    meanMs: cycleMs - accounted,
    msPerRun: cycleMs - accounted,
    waitingMsPerRun: null,
  });
  return { cycleMs, rows };
}

/** Joins the driver's and pg_stat_statements' views of each statement kind, most frequent first. */
export function summariseStatements(latency: LatencyResult): StatementRow[] {
  const runs = latency.flows;
  const server = new Map((latency.statements ?? []).map((g) => [g.label, g]));
  const labels = new Set([...latency.driver.statements.keys(), ...server.keys()]);
  return [...labels]
    .map((label) => {
      const driver = latency.driver.statements.get(label);
      const seen = server.get(label);
      return {
        label,
        driverCallsPerRun: (driver?.calls ?? 0) / runs,
        serverCallsPerRun: latency.statements === null ? null : (seen?.calls ?? 0) / runs,
        roundTripMeanMs: driver && driver.calls > 0 ? driver.ms / driver.calls : Number.NaN,
        serverMeanMs: seen && seen.calls > 0 ? seen.execMs / seen.calls : null,
        variants: seen?.variants ?? null,
      };
    })
    .sort((a, b) => b.driverCallsPerRun - a.driverCallsPerRun || a.label.localeCompare(b.label));
}

/** A label with its SET list cut to three columns, short enough to chain yet telling two UPDATEs apart. */
function shortLabel(label: string): string {
  const m = /^(.* SET )(.*)$/.exec(label);
  if (!m) return label;
  const columns = (m[2] ?? '').split(',');
  return `${m[1]}${columns.slice(0, 3).join(',')}${columns.length > 3 ? ',…' : ''}`;
}
