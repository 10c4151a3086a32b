import { fixed, markdownTable } from '../markdown-table.ts';
import type { BacklogResult } from './measure-backlogs.ts';
import type { InDatabaseResult } from './measure-in-database.ts';
import type { OverHttpResult } from './measure-over-http.ts';

/** Everything one scale run measured, as written to the JSON file. */
export interface ScaleReport {
  startedAt: string;
  runs: number;
  repeat: number;
  seed: { seconds: number; databaseSizeMb: number; rows: Record<string, number> };
  inDatabase: InDatabaseResult[];
  overHttp: OverHttpResult[];
  /** The control plane's resident set (VmRSS) once /healthz answered, before the HTTP phase. */
  controlPlaneIdleRssMb: number;
  controlPlanePeakRssMb: number;
  backlogs: BacklogResult[];
  browser: { visits: number; pages: { name: string; path: string; medianMs: number; maxMs: number }[] } | null;
  browserError: string | null;
  machine: { cpus: number; loadAverage: number[] };
}

/** The markdown report: figures first, then every query's plan and what was flagged in it. */
export function renderScaleReport(r: ScaleReport): string {
  const http = new Map(r.overHttp.map((h) => [h.name, h]));
  const queries = markdownTable(
    ['console query', 'in DB p50 ms', 'in DB p95 ms', 'HTTP p50 ms', 'HTTP p95 ms', 'answer KB', 'flags'],
    r.inDatabase.map((q) => [
      q.name,
      fixed(q.p50Ms, 1),
      fixed(q.p95Ms, 1),
      fixed(http.get(q.name)?.p50Ms, 1),
      fixed(http.get(q.name)?.p95Ms, 1),
      fixed((http.get(q.name)?.bytes ?? NaN) / 1024, 1),
      q.findings.length ? q.findings.map((f) => f.kind).join(', ') : '–',
    ]),
  );
  const backlogs = markdownTable(
    ['sweep', 'setting', 'rows', 'seconds', 'rows/s'],
    r.backlogs.map((b) => [b.sweep, b.setting, String(b.rows), fixed(b.seconds, 1), fixed(b.rowsPerSecond, 0)]),
  );
  const browser = r.browser
    ? markdownTable(
        ['page (Chromium, first data on screen)', 'median ms', 'max ms'],
        r.browser.pages.map((p) => [
          `${p.name} (\`${p.path.replace(/[0-9a-f-]{36}/, '<run>')}\`)`,
          fixed(p.medianMs, 0),
          fixed(p.maxMs, 0),
        ]),
      )
    : `Not measured: ${r.browserError ?? 'skipped'}.`;
  const rows = markdownTable(
    ['table', 'rows'],
    Object.entries(r.seed.rows).map(([t, n]) => [t, n.toLocaleString('en')]),
  );
  const plans = r.inDatabase
    .map(
      (q) =>
        `### ${q.name} (\`${q.path}\`)\n\n` +
        q.statements
          .map(
            (s) =>
              `- \`${s.sql.slice(0, 400)}${s.sql.length > 400 ? '…' : ''}\`\n  - plan: ${s.plan}` +
              (s.findings.length ? `\n  - **flagged**: ${s.findings.map((f) => f.detail).join('; ')}` : ''),
          )
          .join('\n'),
    )
    .join('\n\n');
  return `# Scale bench: ${r.runs.toLocaleString('en')} runs (${r.startedAt})

\`npm run bench -- scale --runs ${r.runs}\`: a throwaway PostgreSQL 15 (test-postgres: fsync off), seeded by
set-based SQL in ${fixed(r.seed.seconds, 0)} s (${fixed(r.seed.databaseSizeMb / 1024, 2)} GB), VACUUM ANALYZEd. Machine: ${r.machine.cpus} cores,
load average at the end ${r.machine.loadAverage.map((l) => l.toFixed(1)).join(' / ')} (shared with other engineers' work).
In DB: the sum of planning + execution time (EXPLAIN ANALYZE, TIMING OFF) of the SELECTs one call sends,
${r.repeat} repetitions. Over HTTP: a signed-in client against a control plane in its own process, ${r.repeat} calls
after 2 warm-up calls. Flags: seq_scan (a big table read whole), big_sort / big_read (over 12,000 rows
sorted or read in one loop). How each figure is obtained: bench/README.md.

## Seeded rows

${rows}

## Console queries

${queries}

Control plane (built JavaScript, as \`npm start\` runs it): RSS once started ${fixed(r.controlPlaneIdleRssMb, 0)} MB;
peak RSS (VmHWM) after the HTTP phase: **${fixed(r.controlPlanePeakRssMb, 0)} MB**.

## Sweeps on a backlog (beside the seeded history)

${backlogs}

## The console in Chromium (issue 10: lists and run page < 1 s, overview < 1.5 s)

${browser}

## Plans

${plans}
`;
}
