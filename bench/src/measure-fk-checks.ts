import { parseArgs } from 'node:util';
import pg from 'pg';
import { createDatabase, startCluster } from '@sagaflow/test-postgres';
import { markdownTable } from './markdown-table.ts';
import { percentile } from './percentile.ts';
import { prepareTemplateDatabase } from './prepare-template-database.ts';
import { progress } from './progress.ts';
import { readSchedstat } from './read-postgres-process-cpu.ts';

/**
 * `pnpm --filter @sagaflow/bench run bench:fk-checks [flows per round] [rounds]`: what the foreign keys
 * from the run's child tables to flow_runs cost one backend's CPU per flow (ADR 0068), apart from the
 * machine's load and the commits' flushes. Two databases of one throwaway cluster, migrated alike, one
 * then without those foreign keys; one connection each (synchronous_commit off: the flush is not
 * what is measured). Each round writes `flows` 3-step flows' rows on both, in alternating order, as
 * the hot path writes them (start: the run, step 1, three events; two transitions: the run locked for
 * no key update, the step closed, the next one, two events; the finish: the run locked for update and
 * finished, two events), one transaction per statement group, from a server-side loop so the client
 * adds nothing; the backend's CPU is read from /proc/<pid>/schedstat around each round.
 */
async function main(): Promise<void> {
  const { positionals } = parseArgs({ allowPositionals: true, args: process.argv.slice(2).filter((a) => a !== '--') });
  const [flows, rounds] = [Number(positionals[0] ?? 500), Number(positionals[1] ?? 12)];
  if (!Number.isInteger(flows) || flows < 1)
    throw new Error(`flows per round must be a positive integer, got ${positionals[0]}`);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`rounds must be a positive integer, got ${positionals[1]}`);
  const cluster = await startCluster({ log: (line) => progress(`test-postgres: ${line}`) });
  const clients: pg.Client[] = [];
  try {
    const arms = [
      { name: 'with the foreign keys', template: 'fk_kept', withoutRunForeignKeys: false },
      { name: 'without them', template: 'fk_dropped', withoutRunForeignKeys: true },
    ];
    const backends: { client: pg.Client; pid: number; usPerFlow: number[] }[] = [];
    for (const arm of arms) {
      await prepareTemplateDatabase(cluster.adminUrl, arm.template, arm);
      const url = await createDatabase(cluster.adminUrl, `${arm.template}_run`, { template: arm.template });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      clients.push(client);
      await client.query('set synchronous_commit = off');
      const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      backends.push({ client, pid, usPerFlow: [] });
    }
    progress(`warm-up: ${flows} flows on each, then analyze`);
    for (const b of backends) {
      await b.client.query(writeFlows(flows));
      await b.client.query('analyze');
    }
    for (let round = 0; round < rounds; round++) {
      for (const b of round % 2 === 0 ? backends : [...backends].reverse()) {
        const before = readSchedstat(b.pid)!.runNs;
        await b.client.query(writeFlows(flows));
        b.usPerFlow.push((readSchedstat(b.pid)!.runNs - before) / 1e3 / flows);
      }
      progress(`round ${round + 1} of ${rounds}`);
    }
    const [kept, dropped] = backends.map((b) => b.usPerFlow) as [number[], number[]];
    const differences = dropped.map((d, i) => d - kept[i]!);
    const median = (values: number[]) => percentile(values, 50);
    console.log(
      markdownTable(
        ['one backend, µs of CPU per flow', 'median', 'min', 'max'],
        [
          [arms[0]!.name, ...stats(kept)],
          [arms[1]!.name, ...stats(dropped)],
          ['difference, pair by pair', ...stats(differences)],
        ],
      ),
    );
    console.log(
      `${rounds} rounds of ${flows} flows, order alternated; lower without them in ` +
        `${differences.filter((d) => d < 0).length} of ${rounds}; median difference ${median(differences).toFixed(0)} µs per flow.`,
    );
  } finally {
    for (const c of clients) await c.end();
    await cluster.stop();
  }
}

function stats(values: number[]): string[] {
  return [percentile(values, 50), Math.min(...values), Math.max(...values)].map((v) => v.toFixed(0));
}

/** `flows` 3-step flows' rows, one transaction per hot statement: 3 step rows and 9 events, 12 checks with the foreign keys. */
function writeFlows(flows: number): string {
  return `do $$
    declare r uuid;
    begin
      for i in 1..${flows} loop
        r := gen_random_uuid();
        insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, input, status) values (r, 'bench', 1, '{}', 'Running');
        insert into "sagaflow"."action_runs" (run_id, sequence, name, input, status) values (r, 1, 'a1', '{}', 'Running');
        insert into "sagaflow"."flow_events" (run_id, type) values (r, 'run.started'), (r, 'run.running'), (r, 'action.started');
        commit;
        for s in 2..3 loop
          perform 1 from "sagaflow"."flow_runs" where id = r for no key update;
          update "sagaflow"."action_runs" set status = 'Completed' where run_id = r and sequence = s - 1;
          insert into "sagaflow"."action_runs" (run_id, sequence, name, input, status) values (r, s, 'a' || s, '{}', 'Running');
          insert into "sagaflow"."flow_events" (run_id, type) values (r, 'action.completed'), (r, 'action.started');
          commit;
        end loop;
        perform 1 from "sagaflow"."flow_runs" where id = r for update;
        update "sagaflow"."action_runs" set status = 'Completed' where run_id = r and sequence = 3;
        update "sagaflow"."flow_runs" set status = 'Completed', finished_at = now() where id = r;
        insert into "sagaflow"."flow_events" (run_id, type) values (r, 'action.completed'), (r, 'run.completed');
        commit;
      end loop;
    end $$`;
}

await main();
