import { afterAll, beforeAll, describe, it } from 'vitest';
import type { Database } from '../../../src/index.ts';
import { killWithRoundsOut, type KillState } from '../../support/kill-with-rounds-out.ts';
import { openTestDatabase } from '../../support/test-database.ts';

/**
 * Review 16 (ADR 0077): review 14's worker SIGKILLed with TWO of its rounds out (ADR 0076), each one
 * transaction on its own backend: each committed whole before the kill or not at all, independently of
 * the other. After reclaim, one outcome per step and one finish per run; every run ends.
 */
describe('a worker SIGKILLed with two rounds out (real PostgreSQL, real process)', () => {
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
    await killWithRoundsOut(db, 2, state);
  }, 180_000);
});
