import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { closedByHostError } from './closed-by-host.ts';

// The errors are the drivers' own, thrown by real calls: a pool the host ended, and a server that is not
// there (an outage, which must still be retried). PGlite's closed handle is covered end to end by
// test/regressions/fix52/an-action-outliving-the-drain.test.ts.
const caught = (p: Promise<unknown>) =>
  p.then(
    () => new Error('did not throw'),
    (err: unknown) => err,
  );

describe('closedByHostError', () => {
  it('is a pool the host ended, also under a wrapper that keeps it as its cause', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://x@127.0.0.1:1/x' });
    await pool.end();
    const err = await caught(pool.query('select 1'));
    expect(closedByHostError(err)).toBe(true);
    expect(closedByHostError(new Error('wrapped', { cause: err }))).toBe(true);
  });

  it('is not a server that cannot be reached, nor anything else', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://x@127.0.0.1:1/x', connectionTimeoutMillis: 5_000 });
    const err = await caught(pool.query('select 1'));
    await pool.end();
    expect((err as { code?: string }).code).toBe('ECONNREFUSED');
    expect(closedByHostError(err)).toBe(false);
    expect(closedByHostError(new Error('Connection terminated unexpectedly'))).toBe(false);
    expect(closedByHostError(new Error('PGlite is closed!'))).toBe(false);
    expect(closedByHostError(null)).toBe(false);
  });
});
