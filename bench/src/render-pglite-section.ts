import { fixed, markdownTable } from './markdown-table.ts';
import type { PgliteLoopFigures, PglitePhaseResult } from './run-pglite-phase.ts';
import type { ModeSummary } from './summarise-peer-comparison.ts';

const storeTitle = { memory: 'PGlite in memory', 'data-dir': 'PGlite on a data directory' } as const;
const modeTitle = { durable: 'PostgreSQL 15, durable commits', 'fsync-off': 'PostgreSQL 15, fsync off' } as const;

/** One row's figures at one concurrency, whichever database ran it. */
interface Cell {
  readonly flowsPerSecond: number | null;
  readonly p50: number | null;
  readonly p99: number | null;
  /** CPU per flow in ms, every process that did the work (the engine's Node, PostgreSQL if separate). */
  readonly cpuMs: string;
}

/**
 * The embedded default beside PostgreSQL: the same 3-step flow and closed loop at each concurrency
 * PGlite ran, PGlite's own figures next to Sagaflow's PostgreSQL medians of the same run, and each
 * row's flows/s as a share of PostgreSQL's durable figure.
 */
export function renderPgliteSection(results: readonly PglitePhaseResult[], modes: readonly ModeSummary[]): string {
  const concurrencies = [...new Set(results.map((r) => r.concurrency))].sort((a, b) => a - b);
  const rows: [string, (c: number) => Cell | undefined][] = [];
  for (const store of ['memory', 'data-dir'] as const) {
    const of = results.filter((r) => r.store === store);
    if (of.length === 0) continue;
    rows.push([
      `${storeTitle[store]} (${of[0]?.settings})`,
      (c) => {
        const r = of.find((p) => p.concurrency === c);
        return r && pgliteCell(r);
      },
    ]);
    rows.push([
      `… floor on the same database: 3 hand-written insert+update transactions per flow`,
      (c) => {
        const r = of.find((p) => p.concurrency === c);
        return r && pgliteCell(r.floor);
      },
    ]);
  }
  for (const mode of modes) {
    rows.push([
      `${modeTitle[mode.mode]} (median of ${mode.systems.find((s) => s.system === 'Sagaflow')?.rounds ?? 0} round(s))`,
      (c) => {
        const s = mode.systems.find((p) => p.system === 'Sagaflow' && p.concurrency === c);
        if (!s) return undefined;
        return {
          flowsPerSecond: s.flowsPerSecond?.median ?? null,
          p50: s.latencyP50Ms?.median ?? null,
          p99: s.latencyP99Ms?.median ?? null,
          cpuMs: `${fixed(s.nodeCpuMsPerFlow?.median, 1)} + ${fixed(s.postgresCpuMsPerFlow?.median, 1)}`,
        };
      },
    ]);
  }
  const durable = rows.find(([title]) => title.startsWith(modeTitle.durable))?.[1];
  const rate = (cell: Cell | undefined, c: number) => {
    if (!cell) return '–';
    const base = durable?.(c)?.flowsPerSecond;
    return base
      ? `${fixed(cell.flowsPerSecond, 0)} (${fixed((cell.flowsPerSecond ?? Number.NaN) / base, 2)}×)`
      : fixed(cell.flowsPerSecond, 0);
  };
  const table = markdownTable(
    [
      'Sagaflow, 3-step no-op flow, closed loop',
      ...concurrencies.flatMap((c) => [
        `c=${c} flows/s (÷ PostgreSQL durable)`,
        `p50 / p99 at c=${c} (ms)`,
        `CPU / flow at c=${c} (ms)`,
      ]),
    ],
    rows.map(([title, cellAt]) => [
      title,
      ...concurrencies.flatMap((c) => {
        const cell = cellAt(c);
        return [rate(cell, c), cell ? `${fixed(cell.p50, 1)} / ${fixed(cell.p99, 1)}` : '–', cell?.cpuMs ?? '–'];
      }),
    ]),
  );
  return [
    '### PGlite, the embedded default, beside PostgreSQL (same run)',
    '',
    table,
    '',
    "PGlite rows: one engine on a fresh, migrated PGlite per phase (in memory; or on a new data directory under the OS temp directory, on this machine's disk), " +
      "each phase in a fresh Node process of its own (bench/src/pglite-phase-child.ts), as the comparison's phases are, so nothing another system ran in the bench's process (DBOS's AsyncLocalStorage hooks) weighs on its promises; " +
      'a worker pool of `c`, the same closed loop and windows as the PostgreSQL phases; the embedded server’s fsync and synchronous_commit are read back ' +
      'and shown in the row. PGlite runs inside that Node process, so its CPU / flow is process.cpuUsage() ÷ flows, engine and database together; the ' +
      'PostgreSQL rows show Node + PostgreSQL. PostgreSQL rows are the Sagaflow medians of the comparison above. The floor ' +
      'row runs first on the same fresh database, the same closed loop and windows, with a "flow" that is three transactions ' +
      'each inserting a step row and updating it to Completed with its output: the least any engine would pay PGlite for ' +
      "three durable steps, so the gap between the two rows is the engine's own cost.",
  ].join('\n');
}

function pgliteCell(r: PgliteLoopFigures): Cell {
  return {
    flowsPerSecond: r.flowsPerSecond,
    p50: r.latencyP50Ms,
    p99: r.latencyP99Ms,
    cpuMs: fixed(r.nodeCpuMsPerFlow, 1),
  };
}
