import { parseEnv, startControlPlane, type ControlPlane } from '@sagaflow/control';
import { createDatabase as createPgDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { captureStatements } from './capture-statements.ts';
import { signInConsole, type ConsoleHttp } from './console-http.ts';
import { explainStatement } from './explain-statement.ts';
import { bigRows, planFindings, planOutline } from './plan-findings.ts';
import './seeded-plan-plane.ts';

/**
 * Review 41, ADR 0018 / 0032: every filter the runs and instances lists accept reads through an
 * index that fits it, so a page costs the same at 200 k rows as at 2 k. The plan test in the bench
 * covers the console's own combinations; these are the API's other ones (the CLI and any script
 * send them). Seed: 200 k runs set-based in the order they were made (as a real table holds them),
 * 50 k two to three days old, then 150 k created and updated in the last half hour (a busy
 * system's last half hour); 40 k instances likewise (10 k old, 30 k recent). Each
 * statement a call sends is EXPLAIN ANALYZEd with its own parameters and judged by the bench's
 * `planFindings` (no sequential scan of a big table, no sort or read over 12,000 rows).
 */
describe('review 41 (apps/control/test/regressions/review41/RESULTS.md): list filters read an index that fits them at 200 k runs (PostgreSQL)', () => {
  let plane: ControlPlane;
  let api: ConsoleHttp;
  let explainer: pg.Client;

  beforeAll(async () => {
    const url = await createPgDatabase(inject('pgAdminUrl'), uniqueDatabaseName('r41_plans'), {
      template: inject('pgTemplate'),
    });
    explainer = new pg.Client({ connectionString: url });
    await explainer.connect();
    await explainer.query(`
      insert into "sagaflow"."flow_runs" (flow_name, flow_version, business_key, status, input, created_at, updated_at,
                                          started_at, finished_at)
      select case when g % 50 = 0 then 'rare.flow' else 'bulk.flow' end, 1, 'bk-' || g,
             case when g % 97 = 0 then 'Failed' else 'Completed' end, '{}'::jsonb,
             t, t + interval '1 second', t, t + interval '1 second'
        from generate_series(1, 200000) g,
             lateral (select case when g > 50000 then now() - ((200000 - g) * interval '10 ms')
                                  else now() - interval '3 days' + (g * interval '1 second') end as t) x`);
    await explainer.query(`
      insert into "sagaflow"."saga_instances" (process_name, correlation_key, status, current_state, created_at, updated_at)
      select 'bulk.process', 'ck-' || g, 'ACTIVE', 'Waiting', t, t
        from generate_series(1, 40000) g,
             lateral (select case when g > 10000 then now() - ((40000 - g) * interval '50 ms')
                                  else now() - interval '3 days' + (g * interval '1 second') end as t) x`);
    await explainer.query('analyze "sagaflow"."flow_runs"');
    await explainer.query('analyze "sagaflow"."saga_instances"');
    // The monitor's interval at its maximum: the capture sees every statement in this process.
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: url,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_ADMIN_PASSWORD: 'plan test password',
        SAGAFLOW_MONITOR_INTERVAL_MS: '3600000',
      }),
    );
    api = await signInConsole(plane.url, 'admin', 'plan test password');
  }, 120_000);
  afterAll(async () => {
    await explainer?.end();
    await plane?.stop();
  });

  /** The faults of every statement one call sent, each with its plan in one line. */
  async function faultsOf(call: () => Promise<unknown>): Promise<string[]> {
    const { statements } = await captureStatements(call);
    expect(statements.length).toBeGreaterThan(0);
    const faults: string[] = [];
    for (const s of statements) {
      const { plan } = await explainStatement(explainer, s);
      for (const f of planFindings(plan, bigRows))
        faults.push(`${f.detail}\n    ${s.text.replace(/\s+/g, ' ').slice(0, 260)}\n    ${planOutline(plan)}`);
    }
    return faults;
  }

  it('runs not updated for an hour, newest first (the API default order), read a bounded range', async () => {
    const faults = await faultsOf(() => api.query('runs.page', { staleForSeconds: 3600, limit: 50 }));
    expect(faults, faults.join('\n')).toEqual([]);
  }, 60_000);

  it('held: runs created in a past window, stalest first, read a bounded range', async () => {
    const to = new Date(Date.now() - 36 * 3600_000).toISOString();
    const from = new Date(Date.now() - 4 * 86_400_000).toISOString();
    const faults = await faultsOf(() =>
      api.query('runs.page', { createdFrom: from, createdTo: to, order: 'stalest', limit: 50 }),
    );
    expect(faults, faults.join('\n')).toEqual([]);
  }, 60_000);

  it('held: a rare status of one flow, newest first, reads a bounded range', async () => {
    const faults = await faultsOf(() =>
      api.query('runs.page', { flowName: 'bulk.flow', status: ['Failed'], limit: 50 }),
    );
    expect(faults, faults.join('\n')).toEqual([]);
  }, 60_000);

  it('held: a business key, either order, is one index lookup', async () => {
    for (const order of ['newest', 'stalest'] as const) {
      const faults = await faultsOf(() => api.query('runs.page', { businessKey: 'bk-170000', order, limit: 50 }));
      expect(faults, faults.join('\n')).toEqual([]);
    }
  }, 60_000);

  it('instances not updated for an hour, newest first, read a bounded range', async () => {
    const faults = await faultsOf(() =>
      api.query('instances.page', { staleForSeconds: 3600, order: 'newest', limit: 50 }),
    );
    expect(faults, faults.join('\n')).toEqual([]);
  }, 60_000);
  it('held: instances in one state (any state name the API accepts), either order, read a bounded range', async () => {
    for (const order of ['stalest', 'newest'] as const) {
      const faults = await faultsOf(() => api.query('instances.page', { state: 'Waiting', order, limit: 50 }));
      expect(faults, `${order}:\n${faults.join('\n')}`).toEqual([]);
    }
  }, 60_000);
});
