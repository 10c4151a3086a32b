import { describe, it } from 'vitest';
import { killWithRoundsOut } from '../../support/kill-with-rounds-out.ts';
import { childWorkerSuite } from '../../support/spawn-worker.ts';

/**
 * Review 16 (ADR 0077): review 14's worker SIGKILLed with TWO of its rounds out (ADR 0076), each one
 * transaction on its own backend: each committed whole before the kill or not at all, independently of
 * the other. After reclaim, one outcome per step and one finish per run; every run ends.
 */
describe('a worker SIGKILLed with two rounds out (real PostgreSQL, real process)', () => {
  const suite = childWorkerSuite();

  it('every run ends here with one outcome per step and one finish', async () => {
    await killWithRoundsOut(suite, 2);
  }, 180_000);
});
