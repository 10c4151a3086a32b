import pg from 'pg';
import { createDatabase, startCluster } from '@sagaflow/test-postgres';
import { markdownTable } from './markdown-table.ts';
import { percentile } from './percentile.ts';
import { prepareTemplateDatabase, type TemplateOptions } from './prepare-template-database.ts';
import { progress } from './progress.ts';
import { readSchedstat } from './read-postgres-process-cpu.ts';

/** One side of a per-backend A/B: its template's options and the server-side loop writing `flows` flows' rows. */
export interface BackendArm {
  name: string;
  template: string;
  options: TemplateOptions;
  writeFlows: (flows: number) => string;
}

/** The `[flows per round] [rounds]` positionals of a per-backend A/B, checked. */
export function parseRounds(positionals: readonly string[]): { flows: number; rounds: number } {
  const [flows, rounds] = [Number(positionals[0] ?? 500), Number(positionals[1] ?? 12)];
  if (!Number.isInteger(flows) || flows < 1)
    throw new Error(`flows per round must be a positive integer, got ${positionals[0]}`);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`rounds must be a positive integer, got ${positionals[1]}`);
  return { flows, rounds };
}

/**
 * What two or more ways of writing a flow's rows cost one backend's CPU per flow, apart from the machine's load
 * and the commits' flushes (ADRs 0068, 0072): a database per arm in one throwaway cluster, one
 * connection each (synchronous_commit off: the flush is not what is measured), a warm-up round then
 * ANALYZE, then `rounds` rounds of `flows` flows on each, in alternating order, each written by a
 * server-side loop so the client adds nothing; the backend's CPU read from /proc/<pid>/schedstat around
 * each round (the arms' order reversed every other round). Prints each arm's figures and its difference
 * from the first arm, round by round, and returns each arm's µs per flow, round by round.
 */
export async function measureBackendArms(
  arms: readonly BackendArm[],
  flows: number,
  rounds: number,
): Promise<number[][]> {
  const cluster = await startCluster({ log: (line) => progress(`test-postgres: ${line}`) });
  const clients: pg.Client[] = [];
  try {
    const backends: { arm: BackendArm; client: pg.Client; pid: number; usPerFlow: number[] }[] = [];
    for (const arm of arms) {
      await prepareTemplateDatabase(cluster.adminUrl, arm.template, arm.options);
      const url = await createDatabase(cluster.adminUrl, `${arm.template}_run`, { template: arm.template });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      clients.push(client);
      await client.query('set synchronous_commit = off');
      const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      backends.push({ arm, client, pid, usPerFlow: [] });
    }
    progress(`warm-up: ${flows} flows on each, then analyze`);
    for (const b of backends) {
      await b.client.query(b.arm.writeFlows(flows));
      await b.client.query('analyze');
    }
    for (let round = 0; round < rounds; round++) {
      for (const b of round % 2 === 0 ? backends : [...backends].reverse()) {
        const before = readSchedstat(b.pid)!.runNs;
        await b.client.query(b.arm.writeFlows(flows));
        b.usPerFlow.push((readSchedstat(b.pid)!.runNs - before) / 1e3 / flows);
      }
      progress(`round ${round + 1} of ${rounds}`);
    }
    const [first, ...others] = backends.map((x) => x.usPerFlow) as [number[], ...number[][]];
    const rows = [[arms[0]!.name, ...stats(first)]];
    const lines: string[] = [];
    others.forEach((values, n) => {
      const name = arms[n + 1]!.name;
      const differences = values.map((v, i) => v - first[i]!);
      rows.push([name, ...stats(values)], [`${name}, minus the first, round by round`, ...stats(differences)]);
      lines.push(
        `${name}: lower in ${differences.filter((d) => d < 0).length} of ${rounds}; median difference ` +
          `${percentile(differences, 50).toFixed(0)} µs per flow.`,
      );
    });
    console.log(markdownTable(['one backend, µs of CPU per flow', 'median', 'min', 'max'], rows));
    console.log([`${rounds} rounds of ${flows} flows, order reversed every other round.`, ...lines].join('\n'));
    return [first, ...others];
  } finally {
    for (const c of clients) await c.end();
    await cluster.stop();
  }
}

function stats(values: number[]): string[] {
  return [percentile(values, 50), Math.min(...values), Math.max(...values)].map((v) => v.toFixed(0));
}
