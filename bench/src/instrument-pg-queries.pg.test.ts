import { createDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { instrumentPgQueries } from './instrument-pg-queries.ts';

describe('instrumentPgQueries', () => {
  let client: pg.Client;
  beforeAll(async () => {
    const url = await createDatabase(inject('pgAdminUrl'), uniqueDatabaseName('instrument'));
    client = new pg.Client({ connectionString: url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
  });

  it('records a query handed over as a pg.Query with its callback (the engine raw statements), failed or not', async () => {
    const recorder = instrumentPgQueries(() => false);
    const submit = (text: string) =>
      new Promise<void>((resolve) => {
        client.query(new pg.Query(text, [], () => resolve()));
      });
    try {
      await client.query({ text: 'select 1 as one' });
      await submit('select 2 as two');
      await submit('select 1 / 0 as never');
    } finally {
      recorder.uninstall();
    }
    const calls = [...recorder.statements.values()].reduce((n, s) => n + s.calls, 0);
    expect(calls).toBe(3);
  });
});
