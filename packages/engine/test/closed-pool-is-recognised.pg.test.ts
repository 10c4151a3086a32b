import { describe, expect, it } from 'vitest';
import { closedByHostError } from '../src/db/closed-by-host.ts';
import { openTestDatabase } from './support/test-database.ts';

/** ADR 0129 addendum: a host may end the pool it reaches through `db.pool` without `db.close()`. */
describe('a pool the host ended itself is a closed handle, whatever the error says', () => {
  it('is closed once the pool is ended', async () => {
    const db = await openTestDatabase();
    expect(closedByHostError(new Error('reworded'), db.driver)).toBe(false);
    await db.pool?.end();
    expect(closedByHostError(new Error('reworded'), db.driver)).toBe(true);
    await db.close().catch(() => undefined);
  });
});
