import type pg from 'pg';
import type { CapturedStatement } from './capture-statements.ts';
import type { PlanNode } from './plan-findings.ts';

/** One EXPLAIN ANALYZE of a statement: its plan with actual rows, and the server's own times. */
export interface ExplainedStatement {
  plan: PlanNode;
  planningMs: number;
  executionMs: number;
}

/**
 * Runs a captured statement under EXPLAIN (ANALYZE, TIMING OFF) with its own parameters: the plan the
 * server really chose and ran, and its planning and execution time inside the server (no network,
 * no client). TIMING OFF keeps per-node clock reads from inflating the time. `settings` (`set local
 * ...` the call made) are made in a transaction around it, as the call made them around its reads.
 */
export async function explainStatement(
  client: pg.ClientBase,
  s: CapturedStatement,
  settings: readonly string[] = [],
): Promise<ExplainedStatement> {
  if (settings.length === 0) return explainAlone(client, s);
  await client.query(`begin; ${settings.join('; ')}`);
  try {
    return await explainAlone(client, s);
  } finally {
    await client.query('rollback');
  }
}

async function explainAlone(client: pg.ClientBase, s: CapturedStatement): Promise<ExplainedStatement> {
  const result = await client.query<{
    'QUERY PLAN': [{ Plan: PlanNode; 'Planning Time': number; 'Execution Time': number }];
  }>(`explain (analyze, timing off, format json) ${s.text}`, s.values);
  const [out] = result.rows[0]?.['QUERY PLAN'] ?? [];
  if (!out) throw new Error(`no plan for: ${s.text.slice(0, 200)}`);
  return { plan: out.Plan, planningMs: out['Planning Time'], executionMs: out['Execution Time'] };
}
