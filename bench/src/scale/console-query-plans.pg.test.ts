import { createDatabase as createPgDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { parseEnv, startControlPlane, type ControlPlane } from '@sagaflow/control';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { captureStatements, type CapturedStatement } from './capture-statements.ts';
import { signInConsole, type ConsoleHttp } from './console-http.ts';
import { consoleQueries, type ConsoleQuery } from './console-queries.ts';
import { explainStatement } from './explain-statement.ts';
import { bigRows, planFindings, planOutline } from './plan-findings.ts';
import { pickSamples, seedConsoleScale } from './seed-console-scale.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
  }
}

/**
 * Issue 12 §1: every console read uses an index that fits its filter and order. The scale bench's
 * seed at a small size (50 k runs, 250 k steps, 10 k instances...), ANALYZEd so the planner's
 * choices are its own; each console call made over HTTP against a real control plane; each SELECT
 * it sent EXPLAIN ANALYZEd with its own parameters. No plan may scan a big table sequentially, sort
 * or read more than `bigRows` rows: at 50 k runs any of those means walking the history, which a
 * million runs turns into seconds. Plans, not timings.
 */
describe('console queries at scale (PostgreSQL)', () => {
  const runs = 50_000;
  let plane: ControlPlane;
  let api: ConsoleHttp;
  let queries: ConsoleQuery[];
  let explainer: pg.Client;

  beforeAll(async () => {
    const url = await createPgDatabase(inject('pgAdminUrl'), uniqueDatabaseName('console_plans'), {
      template: inject('pgTemplate'),
    });
    plane = await startControlPlane(
      // The monitor's interval at its maximum: the capture sees every statement in this process,
      // and only the console's calls are under test (the sweeps have their own, ADR 0026).
      parseEnv({
        DATABASE_URL: url,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_ADMIN_PASSWORD: 'plan test password',
        SAGAFLOW_MONITOR_INTERVAL_MS: '3600000',
      }),
    );
    const seed = await seedConsoleScale(plane.db.driver, { runs, chunk: 25_000 });
    await plane.db.driver.exec('vacuum analyze');
    queries = consoleQueries(await pickSamples(plane.db.driver, seed));
    api = await signInConsole(plane.url, 'admin', 'plan test password');
    explainer = new pg.Client({ connectionString: url });
    await explainer.connect();
  }, 300_000);
  afterAll(async () => {
    await explainer?.end();
    await plane?.stop();
  });

  it('every console query reads through an index that fits it: no seq scan of a big table, no big sort, no big read', async () => {
    const faults: string[] = [];
    let explained = 0;
    for (const q of queries) {
      const { statements } = await captureStatements(() => api.query(q.path, q.input));
      expect(statements.length, q.name).toBeGreaterThan(0);
      for (const s of statements) {
        const { plan } = await explainStatement(explainer, s);
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
    const { plan } = await explainStatement(explainer, walk);
    expect(planFindings(plan, bigRows).map((f) => f.kind)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^(seq_scan|big_read)$/)]),
    );
  });
});

const oneLine = (s: CapturedStatement) => s.text.replace(/\s+/g, ' ').slice(0, 300);
