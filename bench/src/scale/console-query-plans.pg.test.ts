import { inProcessTransport, publishOutboxBatch } from '@sagaflow/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureStatements, type CapturedStatement } from './capture-statements.ts';
import { consoleQueries, type ConsoleQuery } from './console-queries.ts';
import { explainStatement } from './explain-statement.ts';
import { bigRows, planFindings, planOutline, type PlanNode } from './plan-findings.ts';
import { pickSamples } from './seed-console-scale.ts';
import { startSeededPlanPlane, type SeededPlanPlane } from './seeded-plan-plane.ts';

/**
 * Issue 12 §1: every console read uses an index that fits its filter and order. The scale bench's
 * seed at a small size (50 k runs, 250 k steps, 10 k instances...), ANALYZEd so the planner's
 * choices are its own; each console call made over HTTP against a real control plane; each SELECT
 * it sent EXPLAIN ANALYZEd with its own parameters. No plan may scan a big table sequentially, sort
 * or read more than `bigRows` rows: at 50 k runs any of those means walking the history, which a
 * million runs turns into seconds. Plans, not timings.
 */
describe('console queries at scale (PostgreSQL)', () => {
  let stack: SeededPlanPlane;
  let queries: ConsoleQuery[];

  beforeAll(async () => {
    stack = await startSeededPlanPlane('console_plans', 50_000, 25_000);
    queries = consoleQueries(await pickSamples(stack.plane.db.driver, stack.seed));
  }, 300_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('every console query reads through an index that fits it: no seq scan of a big table, no big sort, no big read', async () => {
    const faults: string[] = [];
    let explained = 0;
    for (const q of queries) {
      const { statements } = await captureStatements(() => stack.api.query(q.path, q.input));
      expect(statements.length, q.name).toBeGreaterThan(0);
      for (const s of statements) {
        const { plan } = await explainStatement(stack.explainer, s);
        explained++;
        for (const f of planFindings(plan, bigRows))
          faults.push(`${q.name}: ${f.detail}\n    ${oneLine(s)}\n    ${planOutline(plan)}`);
      }
    }
    expect(explained).toBeGreaterThan(queries.length);
    expect(faults, faults.join('\n')).toEqual([]);
  }, 300_000);

  it('the check fails a plan that walks the history (a filter no index fits)', async () => {
    const walk: CapturedStatement = {
      text: `select id from "sagaflow"."flow_runs" where input->>'lines' = $1 order by created_at desc limit 50`,
      values: ['9'],
    };
    const { plan } = await explainStatement(stack.explainer, walk);
    expect(planFindings(plan, bigRows).map((f) => f.kind)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^(seq_scan|big_read)$/)]),
    );
  });
});

const oneLine = (s: CapturedStatement) => s.text.replace(/\s+/g, ' ').slice(0, 300);

const nodesOf = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodesOf)];

/**
 * ADR 0036: the overview's and the definitions page's counts, and the outbox claim, read what is in
 * flight through partial indexes, never the history. Each call's statements EXPLAIN ANALYZEd as sent.
 */
describe('overview, definitions and the outbox claim read open rows only (PostgreSQL)', () => {
  let stack: SeededPlanPlane;
  beforeAll(async () => {
    stack = await startSeededPlanPlane('dash_plans', 20_000, 10_000);
  }, 300_000);
  afterAll(async () => {
    await stack?.stop();
  });

  async function plansOf(call: () => Promise<unknown>): Promise<PlanNode[][]> {
    const { statements } = await captureStatements(call);
    const plans: PlanNode[][] = [];
    for (const s of statements) plans.push(nodesOf((await explainStatement(stack.explainer, s)).plan));
    return plans;
  }
  const usesIndexOnly = (plans: PlanNode[][], index: string) =>
    plans.some((p) => p.some((n) => n['Node Type'] === 'Index Only Scan' && n['Index Name'] === index));

  it('the overview counts runs per status over at most 1,001 index entries each, stuck runs and open instances index-only', async () => {
    const plans = await plansOf(() => stack.api.query('overview.get', {}));
    expect(usesIndexOnly(plans, 'saga_instances_open_process_state_idx')).toBe(true);
    expect(usesIndexOnly(plans, 'flow_runs_stuck_reason_status_idx')).toBe(true);
    // 17 k of the 20 k runs are Completed: counted one by one, that status alone would read them all.
    const flowRunReads = plans
      .flat()
      .filter((n) => n['Relation Name'] === 'flow_runs')
      .map((n) => (n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0));
    expect(flowRunReads.length).toBeGreaterThan(0);
    expect(Math.max(...flowRunReads)).toBeLessThanOrEqual(1001);
  });

  it('the definitions page counts open and stuck runs index-only, through their partial indexes', async () => {
    const plans = await plansOf(() => stack.api.query('definitions.list', {}));
    expect(usesIndexOnly(plans, 'flow_runs_open_flow_version_status_idx')).toBe(true);
    expect(usesIndexOnly(plans, 'flow_runs_stuck_flow_version_status_idx')).toBe(true);
    expect(usesIndexOnly(plans, 'saga_instances_open_process_state_idx')).toBe(true);
  });

  it('the transitions chart reads the window index-only through its partial index', async () => {
    const plans = await plansOf(() => stack.api.query('series.get', { window: '24h' }));
    expect(usesIndexOnly(plans, 'process_transitions_counted_at_idx')).toBe(true);
  });

  it('the outbox claim finds its sources in the front of the Pending rows by seq, not by a walk over every source', async () => {
    await stack.plane.db.driver.exec(`
      insert into "sagaflow"."outbox" (message_id, source_kind, source_id, type, destination, payload, available_at)
      select 'plan-' || g, 'process', 'plan-' || (g % 500), 'PlanMessage', 'plans', '{}'::jsonb, now() - interval '1 minute'
        from generate_series(1, 5000) g;
      analyze "sagaflow"."outbox";`);
    const plans = await plansOf(() =>
      publishOutboxBatch({ db: stack.plane.db, routes: { plans: inProcessTransport(() => undefined) } }),
    );
    const front = plans.find((p) => p.some((n) => n['Index Name'] === 'outbox_pending_seq_idx'));
    expect(front, 'a read through outbox_pending_seq_idx').toBeDefined();
    const outboxReads = front!.filter((n) => n['Relation Name'] === 'outbox').map((n) => n['Actual Rows'] ?? 0);
    // The default batch of 100 reads a front of 400 rows, of 5,000 Pending.
    expect(Math.max(...outboxReads)).toBeLessThanOrEqual(400);
  });
});
