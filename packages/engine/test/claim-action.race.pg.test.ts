import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { claimStep } from '../src/store/claim-step.ts';
import { recordStepOutcome } from '../src/store/record-step-outcome.ts';
import { seedStep } from './support/seed-step.ts';
import { openTestDatabase } from './support/test-database.ts';

describe('claim and outcome races on a real PostgreSQL, real concurrent connections', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 24 });
  });
  afterAll(async () => {
    await db.close();
  });

  it('of 12 workers claiming one Pending row at once, exactly one wins (50 rounds)', async () => {
    for (let round = 0; round < 50; round++) {
      const { id } = await seedStep(db);
      const now = new Date();
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, w) =>
          db.prisma.$transaction((tx) => claimStep(tx, { table: 'action_runs', id, workerId: `w${w}`, now })),
        ),
      );
      expect(results.filter((r) => r !== null)).toEqual([1]);
      expect(await db.prisma.actionRun.findUniqueOrThrow({ where: { id } })).toMatchObject({
        attempts: 1,
        status: 'Running',
      });
    }
  });

  it('a stale row reclaimed by many at once goes to exactly one, and only its outcome lands (50 rounds)', async () => {
    for (let round = 0; round < 50; round++) {
      const { id } = await seedStep(db, { reclaimAfterSeconds: 1 });
      await claimStep(db.prisma, { table: 'action_runs', id, workerId: 'dead', now: new Date() });
      const later = new Date(Date.now() + 5000);
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, w) =>
          claimStep(db.prisma, { table: 'action_runs', id, workerId: `w${w}`, now: later }),
        ),
      );
      const winners = claims.filter((c): c is number => c !== null);
      expect(winners).toEqual([2]);
      // The dead worker's straggling outcome and the winner's race to record: only attempts=2 may land.
      const outcomes = await Promise.all([
        recordStepOutcome(db.prisma, {
          table: 'action_runs',
          id,
          attempts: 1,
          outcome: { kind: 'completed', output: 'stale' },
          now: later,
        }),
        recordStepOutcome(db.prisma, {
          table: 'action_runs',
          id,
          attempts: 2,
          outcome: { kind: 'completed', output: 'live' },
          now: later,
        }),
      ]);
      expect(outcomes).toEqual(['rejected', 'recorded']);
      expect(await db.prisma.actionRun.findUniqueOrThrow({ where: { id } })).toMatchObject({
        status: 'Completed',
        output: 'live',
      });
    }
  });
});
