import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { PgCluster } from '@sagaflow/test-postgres';
import { createDatabase } from '@sagaflow/test-postgres';
import { withPgClient } from './with-pg-client.ts';

const pgbenchPath = '/usr/lib/postgresql/15/bin/pgbench';
const rows = 100;
const script = `\\set id random(1, ${rows})\nupdate t set v = v + 1 where id = :id;\n`;

export interface Ceiling {
  readonly clients: number;
  readonly tps: number;
  readonly transactions: number;
  readonly command: string;
}

/**
 * The database's own ceiling for the kind of write a step needs: single-row UPDATE commits, measured
 * by pgbench with each of `clients` in turn on database `name` of the same cluster (a `rows`-row
 * table, random id per transaction, simple query protocol, no vacuum first). The database is created
 * on first use and reused.
 */
export async function runPgbenchCeilings(
  cluster: PgCluster,
  options: { name: string; clients: readonly number[]; seconds: number },
): Promise<Ceiling[]> {
  const { name, seconds } = options;
  const url = await createDatabase(cluster.adminUrl, name);
  await withPgClient(url, async (c) => {
    await c.query('create table t (id int primary key, v bigint not null default 0)');
    await c.query(`insert into t (id) select generate_series(1, ${rows})`);
    await c.query('vacuum analyze t');
  });
  const dir = await mkdtemp(join(tmpdir(), 'sagaflow-pgbench-'));
  try {
    const file = join(dir, 'update-one-row.sql');
    await writeFile(file, script);
    const ceilings: Ceiling[] = [];
    for (const clients of options.clients) {
      const args = ['-n', '-c', String(clients), '-j', String(Math.min(clients, 2)), '-T', String(seconds), '-f', file];
      const target = ['-h', cluster.host, '-p', String(cluster.port), '-U', cluster.user, name];
      const { stdout } = await promisify(execFile)(pgbenchPath, [...args, ...target], { encoding: 'utf8' });
      const tps = /^tps = ([\d.]+)/m.exec(stdout)?.[1];
      const transactions = /number of transactions actually processed: (\d+)/.exec(stdout)?.[1];
      if (tps === undefined || transactions === undefined)
        throw new Error(`could not read pgbench's output:\n${stdout}`);
      const shown = [...args.slice(0, -1), 'update-one-row.sql'];
      ceilings.push({
        clients,
        tps: Number(tps),
        transactions: Number(transactions),
        command: `pgbench ${shown.join(' ')}`,
      });
    }
    return ceilings;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
