import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { insertStartedRun } from '../../src/store/insert-started-run.ts';
import { insertStep } from '../../src/store/insert-step.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';

/**
 * A step's input and recorded value must come back exactly as the code produced them: a replay
 * compares a recorded ctx.random() with its own and, on any difference, stops as overtaken. When the
 * step insert went through Prisma's Json input, a double with 17 significant digits came back
 * rounded to 16 (one ctx.random() in five), and the run parked with nothing recorded.
 */
const doubles = [0.48500823341430377, 0.14186903463910627, 0.26410164160539185, 0.025177429284489072];

describe(`regression: a recorded double keeps all its digits (${testDbKind()})`, () => {
  let db: Database;
  let runId: string;
  beforeAll(async () => {
    db = await openTestDatabase();
    ({ runId } = await insertStartedRun(db.prisma, {
      flowName: 'f',
      flowVersion: 1,
      input: null,
      businessKey: null,
      tags: [],
      expiresAt: null,
      runTimeoutAt: null,
      now: new Date(),
      lease: null,
    }));
  });
  afterAll(async () => {
    await db.close();
  });

  it('the inserted row and the stored row carry the exact input and output', async () => {
    for (const [i, d] of doubles.entries()) {
      const step = {
        runId,
        sequence: i + 1,
        kind: 'value' as const,
        name: 'random',
        input: { d },
        status: 'Completed' as const,
        output: d,
      };
      const written = await insertStep(db.prisma, step);
      const again = await insertStep(db.prisma, step);
      expect([written.inserted, again.inserted]).toEqual([true, false]);
      for (const row of [written, again]) expect([row.input, row.output]).toEqual([{ d }, d]);
    }
  });
});
