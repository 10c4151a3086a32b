import { describe, it } from 'vitest';
import { killWithRoundsOut } from '../../support/kill-with-rounds-out.ts';
import { childWorkerSuite } from '../../support/spawn-worker.ts';

/**
 * Review 14 (ADR 0070): a worker process SIGKILLed while one of its rounds (ADR 0066) is out, after
 * several have gone. A round is one transaction: either all of it committed before the kill or none
 * of it did. Whatever did must be finished here exactly once per step; every run must end, none left
 * open or stuck, no start written twice.
 */
describe('a worker SIGKILLed with a round out (real PostgreSQL, real process)', () => {
  const suite = childWorkerSuite();

  it('every run ends here with one outcome per step and one finish', async () => {
    await killWithRoundsOut(suite, 1);
  }, 180_000);
});
