import { afterAll, beforeAll, describe, it } from 'vitest';
import type { Database } from '../../../src/index.ts';
import { killWithRoundsOut, type KillState } from '../../support/kill-with-rounds-out.ts';
import { openTestDatabase } from '../../support/test-database.ts';

/**
 * Review 14 (ADR 0070): a worker process SIGKILLed while one of its rounds (ADR 0066) is out, after
 * several have gone. A round is one transaction: either all of it committed before the kill or none
 * of it did. Whatever did must be finished here exactly once per step; every run must end, none left
 * open or stuck, no start written twice.
 */
describe('a worker SIGKILLed with a round out (real PostgreSQL, real process)', () => {
  let db: Database & { url?: string };
  const state: KillState = { child: null, engine: null };
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    state.child?.kill('SIGKILL');
    await state.engine?.stopWorkers(2000);
    await db.close();
  });

  it('every run ends here with one outcome per step and one finish', async () => {
    await killWithRoundsOut(db, 1, state);
  }, 180_000);
});
