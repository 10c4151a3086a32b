import { existsSync } from 'node:fs';
import { connect } from 'node:net';

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createDatabase } from './create-database.ts';
import { dropDatabase } from './drop-database.ts';
import type { PgCluster } from './pg-cluster.ts';
import { startCluster } from './start-cluster.ts';
import { TestPostgresError } from './test-postgres-error.ts';
import { uniqueDatabaseName } from './unique-database-name.ts';

async function query<R extends pg.QueryResultRow>(url: string, sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Resolves to the connect error code, or 'connected' if something still listens. */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe('startCluster', () => {
  let cluster: PgCluster;
  beforeAll(async () => {
    cluster = await startCluster();
  });
  afterAll(async () => {
    await cluster.stop();
  });

  it('serves PostgreSQL 15 to the sagaflow superuser on 127.0.0.1', async () => {
    const [row] = await query<{ version: string }>(cluster.adminUrl, 'select version()');
    expect(row?.version).toMatch(/^PostgreSQL 15\./);
    const [who] = await query<{ current_user: string }>(cluster.adminUrl, 'select current_user');
    expect(who?.current_user).toBe('sagaflow');
    expect(cluster.adminUrl).toBe(`postgresql://sagaflow@127.0.0.1:${cluster.port}/postgres`);
  });

  it('a database created from a template starts with the template’s tables and rows', async () => {
    const template = uniqueDatabaseName('template');
    const templateUrl = await createDatabase(cluster.adminUrl, template);
    await query(
      templateUrl,
      "create table migrated (id int primary key, note text); insert into migrated values (1, 'seed')",
    );

    const name = uniqueDatabaseName('from_template');
    const url = await createDatabase(cluster.adminUrl, name, { template });

    expect(url).toBe(`postgresql://sagaflow@127.0.0.1:${cluster.port}/${name}`);
    expect(await query(url, 'select id, note from migrated')).toEqual([{ id: 1, note: 'seed' }]);
    await dropDatabase(cluster.adminUrl, name);
    await dropDatabase(cluster.adminUrl, name); // absent: no error
    expect(await query(cluster.adminUrl, `select 1 from pg_database where datname = '${name}'`)).toEqual([]);
  });

  // PostgreSQL retries for 5 s before reporting the template as in use, beyond vitest's default timeout.
  it('cloning a template that someone is connected to fails with template_in_use', { timeout: 30_000 }, async () => {
    const template = uniqueDatabaseName('busy_template');
    const client = new pg.Client({ connectionString: await createDatabase(cluster.adminUrl, template) });
    await client.connect();
    try {
      await expect(createDatabase(cluster.adminUrl, uniqueDatabaseName('clone'), { template })).rejects.toMatchObject({
        code: 'template_in_use',
      });
    } finally {
      await client.end();
    }
  });

  it('dropDatabase disconnects sessions still using the database', async () => {
    const name = uniqueDatabaseName('in_use');
    const client = new pg.Client({ connectionString: await createDatabase(cluster.adminUrl, name) });
    client.on('error', () => {}); // the forced drop terminates this session
    await client.connect();
    await dropDatabase(cluster.adminUrl, name);
    await expect(client.query('select 1')).rejects.toThrow();
    await client.end().catch(() => {});
  });
});

describe('PgCluster.stop', () => {
  it('closes the port and deletes the data directory, and can be called again', async () => {
    const cluster = await startCluster();
    expect(await tryConnect(cluster.port)).toBe('connected');
    expect(existsSync(cluster.dataDir)).toBe(true);

    await cluster.stop();

    expect(await tryConnect(cluster.port)).toBe('ECONNREFUSED');
    expect(existsSync(cluster.dataDir)).toBe(false);
    await expect(cluster.stop()).resolves.toBeUndefined();
    await expect(cluster.restart()).rejects.toMatchObject({ code: 'cluster_stopped' });
  });
});

describe('PgCluster.restart', () => {
  it('keeps the port and the committed data', async () => {
    const cluster = await startCluster();
    try {
      const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('survives_restart'));
      await query(url, "create table kept (v text); insert into kept values ('before restart')");
      const pool = new pg.Pool({ connectionString: url });
      pool.on('error', () => {}); // idle clients are cut off by the restart
      await pool.query('select 1');

      await cluster.restart();

      expect(await query(url, 'select v from kept')).toEqual([{ v: 'before restart' }]);
      await pool.end();
    } finally {
      await cluster.stop();
    }
  });
});

describe('startCluster without binaries', () => {
  it('says what to install and where it looked', async () => {
    const error: unknown = await startCluster({ binDir: '/nonexistent/pg/bin' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TestPostgresError);
    expect((error as TestPostgresError).code).toBe('binaries_missing');
    expect((error as Error).message).toContain('apt-get install -y postgresql');
    expect((error as Error).message).toContain('/nonexistent/pg/bin');
  });
});
