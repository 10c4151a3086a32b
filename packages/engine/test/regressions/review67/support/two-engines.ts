import { afterEach, beforeEach } from 'vitest';
import { createDatabase } from '../../../../src/db/create-database.ts';
import type { Database } from '../../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../../src/testing/create-test-engine.ts';
import { TestClock } from '../../../../src/testing/test-clock.ts';
import { openTestDatabase } from '../../../support/test-database.ts';
import { parked } from './tree.ts';

/**
 * Two engines on one PostgreSQL, set up before each test and closed after it: A on the test database, B on a
 * pool of its own whose clock is 10 s ahead, past the 1 s grace of any fence A makes (ADR 0140).
 */
export function twoEngines(poolSizeA = 6): {
  dbA: Database & { url?: string };
  dbB: Database;
  a: TestEngine;
  b: TestEngine;
} {
  const the = {} as { dbA: Database & { url?: string }; dbB: Database; a: TestEngine; b: TestEngine };
  beforeEach(async () => {
    the.dbA = await openTestDatabase({ poolSize: poolSizeA });
    the.dbB = await createDatabase({ kind: 'postgres', url: the.dbA.url!, poolSize: 6 });
    const config = { monitor: { unfinished_terminate_after_seconds: 1 } };
    the.a = await createTestEngine({ db: the.dbA, flows: [parked], actions: [], config });
    the.b = await createTestEngine({
      db: the.dbB,
      flows: [parked],
      actions: [],
      config,
      clock: new TestClock(new Date(Date.now() + 10_000)),
    });
  });
  afterEach(async () => {
    await the.a?.close();
    await the.b?.close();
    await the.dbB?.close();
    await the.dbA?.close();
  });
  return the;
}
