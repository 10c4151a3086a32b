import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { claimActionRun } from '../src/store/claim-action-run.ts';
import { insertActionRun } from '../src/store/insert-action-run.ts';
import { insertFlowRun } from '../src/store/insert-flow-run.ts';
import { openTestDatabase } from './support/test-database.ts';

describe('claim race on a real PostgreSQL', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 20 });
  });
  afterAll(async () => {
    await db.close();
  });

  it('of many workers claiming one Pending row at once over separate connections, exactly one wins', async () => {
    for (let round = 0; round < 20; round++) {
      const runId = await insertFlowRun(db.prisma, {
        flowName: 'f',
        flowVersion: 1,
        input: {},
        businessKey: null,
        tags: [],
      });
      await insertActionRun(db.prisma, { runId, sequence: 1, name: 'a', input: {}, maxAttempts: 1 });
      const { id } = await db.prisma.actionRun.findUniqueOrThrow({
        where: { run_id_sequence: { run_id: runId, sequence: 1 } },
      });
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, w) =>
          db.prisma.$transaction((tx) => claimActionRun(tx, { id, workerId: `w${w}` })),
        ),
      );
      expect(results.filter((r) => r !== null)).toEqual([1]);
      expect(await db.prisma.actionRun.findUniqueOrThrow({ where: { id } })).toMatchObject({
        attempts: 1,
        status: 'Running',
      });
    }
  });
});
