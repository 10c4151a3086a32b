import { parseArgs } from 'node:util';
import { createDatabase, startCluster, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { createBenchFlow } from './bench-flow.ts';
import { markdownTable } from './markdown-table.ts';
import { openBenchEngine } from './open-bench-engine.ts';
import { prepareTemplateDatabase } from './prepare-template-database.ts';
import { progress } from './progress.ts';
import { driveEngine } from './sagaflow-peer.ts';
import { withPgClient } from './with-pg-client.ts';

/**
 * `pnpm --filter @sagaflow/bench run bench:open-backlog [--history 5000] [--backlog 100000] [--flows 200]`:
 * what a backlog of open runs does to the time of a flow (ADR 0098). On a database of `history`
 * finished runs, analyzed, the engine runs the bench's 3-step flow one at a time; then `backlog` runs
 * open at once (each with a Running step, as after an outage downstream) and the same engine, on the
 * same connections, runs the flow again; then the tables are analyzed and it runs again. Autovacuum
 * is off for the runs and steps tables, so nothing analyzes them between the phases: the middle one
 * shows the plans made before the backlog on a backlog their statistics do not know.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((a) => a !== '--'),
    options: {
      history: { type: 'string', default: '5000' },
      backlog: { type: 'string', default: '100000' },
      flows: { type: 'string', default: '200' },
    },
  });
  const [history, backlog, flows] = [Number(values.history), Number(values.backlog), Number(values.flows)];
  const cluster = await startCluster({ log: (line) => progress(`test-postgres: ${line}`) });
  try {
    await prepareTemplateDatabase(cluster.adminUrl, 'backlog_template');
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('backlog'), {
      template: 'backlog_template',
    });
    const openRuns = (flowName: string, count: number, status: string, stepStatus: string) => `
      with r as (
        insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, status, input, created_at, updated_at,
                                            started_at, finished_at)
        select gen_random_uuid(), '${flowName}', 1, '${status}', '{}'::jsonb, now(), now(), now(),
               case when '${status}' = 'Completed' then now() end
          from generate_series(1, ${count})
        returning id)
      insert into "sagaflow"."action_runs" (run_id, sequence, kind, name, input, status, attempts, max_attempts,
                                            started_at, updated_at, finished_at)
      select r.id, 1, 'action', 'elsewhere', '{}'::jsonb, '${stepStatus}', 1, 1, now(), now(),
             case when '${stepStatus}' = 'Completed' then now() end
        from r`;
    const analyze = 'analyze "sagaflow"."flow_runs"; analyze "sagaflow"."action_runs"';
    await withPgClient(url, async (c) => {
      await c.query(`alter table "sagaflow"."flow_runs" set (autovacuum_enabled = off);
                     alter table "sagaflow"."action_runs" set (autovacuum_enabled = off)`);
      await c.query(openRuns('history', history, 'Completed', 'Completed'));
      await c.query(analyze);
    });
    const bench = createBenchFlow();
    const { db, engine } = await openBenchEngine(url, 1, bench);
    const peer = driveEngine(bench, db, engine);
    const rows: string[][] = [];
    let n = 0;
    const phase = async (label: string) => {
      progress(`${label}: ${flows} flows, one at a time`);
      const started = performance.now();
      for (let i = 0; i < flows; i++) await peer.runOne(n++);
      const ms = (performance.now() - started) / flows;
      rows.push([label, ms.toFixed(2), (1000 / ms).toFixed(0)]);
    };
    try {
      await phase('before the backlog (warm-up)');
      await phase(`before the backlog`);
      await withPgClient(url, (c) => c.query(openRuns('backlog', backlog, 'Running', 'Running')));
      await phase(`${backlog} runs open, not yet analyzed`);
      await withPgClient(url, (c) => c.query(analyze));
      await phase(`${backlog} runs open, analyzed`);
    } finally {
      await peer.close();
    }
    console.log(
      `\nA 3-step flow at c = 1 on ${history} finished runs, before and after ${backlog} runs open at once (ADR 0098)\n`,
    );
    console.log(markdownTable(['phase', 'ms / flow', 'flows/s'], rows));
  } finally {
    await cluster.stop();
  }
}

await main();
