import pg from 'pg';
import { percentile } from '../percentile.ts';
import { captureStatements } from './capture-statements.ts';
import type { ConsoleHttp } from './console-http.ts';
import type { ConsoleQuery } from './console-queries.ts';
import { explainStatement } from './explain-statement.ts';
import { bigRows, planFindings, planOutline, type PlanFinding } from './plan-findings.ts';

/** One console query inside the database: its statements' plans and server time. */
export interface InDatabaseResult {
  name: string;
  path: string;
  statements: { sql: string; plan: string; findings: PlanFinding[]; executionMs: number[] }[];
  /** Per repetition, the sum of its statements' planning + execution time (server clock), p50 / p95. */
  p50Ms: number;
  p95Ms: number;
  findings: PlanFinding[];
}

/**
 * For each console query: the SELECTs its call sends (captured from the in-process control plane),
 * each run `repeat` times under EXPLAIN (ANALYZE, TIMING OFF) with its own parameters on a separate
 * connection. The query's time in one repetition is the sum of its statements' planning and
 * execution times: what the database spends on one call, without network or Node.
 */
export async function measureInDatabase(
  url: string,
  api: ConsoleHttp,
  queries: ConsoleQuery[],
  repeat: number,
  log: (line: string) => void,
): Promise<InDatabaseResult[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const results: InDatabaseResult[] = [];
    for (const q of queries) {
      const { statements, settings } = await captureStatements(() => api.query(q.path, q.input));
      const measured: InDatabaseResult['statements'] = [];
      for (const s of statements) {
        const first = await explainStatement(client, s, settings);
        const times = [first.planningMs + first.executionMs];
        for (let i = 1; i < repeat; i++) {
          const again = await explainStatement(client, s, settings);
          times.push(again.planningMs + again.executionMs);
        }
        measured.push({
          sql: s.text.replace(/\s+/g, ' ').trim(),
          plan: planOutline(first.plan),
          findings: planFindings(first.plan, bigRows),
          executionMs: times,
        });
      }
      const perCall = Array.from({ length: repeat }, (_, i) =>
        measured.reduce((sum, m) => sum + (m.executionMs[i] ?? 0), 0),
      );
      const findings = measured.flatMap((m) => m.findings);
      const result = {
        name: q.name,
        path: q.path,
        statements: measured,
        p50Ms: percentile(perCall, 50),
        p95Ms: percentile(perCall, 95),
        findings,
      };
      results.push(result);
      log(
        `in database: ${q.name}: p50 ${result.p50Ms.toFixed(1)} ms, p95 ${result.p95Ms.toFixed(1)} ms` +
          `${findings.length ? ` — ${findings.map((f) => f.detail).join('; ')}` : ''}`,
      );
    }
    return results;
  } finally {
    await client.end();
  }
}
