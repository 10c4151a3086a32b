import { describe, expect, it } from 'vitest';
import { closedByHostError } from '../src/db/closed-by-host.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';

/**
 * ADR 0129 addendum. After the host's `db.close()` no statement through the handle will ever succeed, and
 * the engine lets an outcome go once instead of retrying it for a minute. It knows the handle is closed
 * from the handle itself, not only from the driver's words: a driver release that rewords "Cannot use a
 * pool after calling end on the pool" or "PGlite is closed" would otherwise bring the minute of retries
 * back. An error while the handle is open is judged by its words alone, so an outage is still retried.
 */
describe(`a handle the host closed is recognised whatever its driver's error says (${testDbKind()})`, () => {
  it('is not closed while open; is closed from the moment close() is called, whatever the error', async () => {
    const db = await openTestDatabase();
    const reworded = new Error('the connection handle is no longer usable');
    expect(db.driver.closed?.()).toBe(false);
    expect(closedByHostError(reworded, db.driver)).toBe(false);
    expect(closedByHostError(new Error('Connection terminated unexpectedly'), db.driver)).toBe(false);

    const closing = db.close();
    expect(closedByHostError(reworded, db.driver)).toBe(true);
    await closing;
    expect(closedByHostError(reworded, db.driver)).toBe(true);
    const sent = await db.driver.query('select 1').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(sent, 'a statement on the closed handle fails').toBeInstanceOf(Error);
    expect(closedByHostError(sent, db.driver)).toBe(true);
  });
});
