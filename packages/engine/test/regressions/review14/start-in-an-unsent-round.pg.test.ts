import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInBatch } from '../../../src/api/start-in-batch.ts';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow } from '../../../src/index.ts';
import type { FusableDeps } from '../../../src/runtime/replay/fused-outcome.ts';
import { transitionInBatch } from '../../../src/runtime/run-statement-batches.ts';
import { activeRun } from '../../support/active-run.ts';
import { activeLones, loneClaims, settleAfterLones, startOf, stepClaim } from '../../support/round-items.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { bareEngine, gate } from '../harness.ts';

/**
 * Review 14 (ADR 0070): a round that carries a start waits for a connection only as long as the
 * pool does (a start holds no lease and must not outwait its caller, ADR 0043). When none comes, the
 * start has waited all a lone start waits: it gets the pool's error, as alone, and is not sent again
 * to wait a second time; the round's transitions go as their own statement and wait as they do alone.
 * Before the fix the start went again and waited the pool's wait once more: a connection freed
 * during that second wait wrote it, seconds after its caller would have had its error alone.
 */
const worker = 'review14-unsent';
const flow = defineFlow({ name: 'review14-unsent', version: 1, run: async () => null });

describe('a start in a round that got no connection (PostgreSQL)', () => {
  let db: (Database & { pool?: pg.Pool }) | undefined;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 1 });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('gets the pool’s error once, as alone, and its round’s transition goes on its own', async () => {
    const direct = db!;
    const [lones, x] = await Promise.all([
      activeLones(direct, 'unsent', worker),
      activeRun(direct, 'unsent-x', worker),
    ]);
    // The rounds' driver, telling when a round failed.
    const roundFailed = gate();
    const { driver } = direct;
    const watched: Database = {
      ...direct,
      driver: {
        ...direct.driver,
        statements: (list, limits) =>
          driver.statements!(list, limits).catch((err: unknown) => {
            roundFailed.open();
            throw err;
          }),
      },
    };
    const deps = bareEngine(watched, {
      flows: [flow],
      actions: [],
      config: { worker: { transaction_wait_ms: 30_000 } },
    }).runtime as FusableDeps;
    // The pool's one connection, held: nothing the engine sends gets one until it is released.
    const held = await direct.pool!.connect();
    const items = settleAfterLones(
      // Go alone at once, and wait.
      await loneClaims(deps, worker, lones),
      // These two wait behind them, and go as one round (a start and a transition) once they are slow.
      [
        startInBatch(watched.driver, startOf('review14-unsent', worker, 'unsent-key')),
        transitionInBatch(deps, stepClaim(worker, x, 1)),
      ],
    );
    // The round waited the pool's wait (5 s) for nothing; whatever goes after it queues for the connection.
    await roundFailed.promise;
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    held.release();
    const [first, started, moved] = await items;
    expect(first.status).toBe('fulfilled');
    expect(started).toMatchObject({
      status: 'rejected',
      reason: { message: expect.stringMatching(/timeout exceeded when trying to connect/) as unknown },
    });
    expect(await direct.prisma.flowRun.count({ where: { business_key: 'unsent-key' } })).toBe(0);
    expect(moved).toMatchObject({ status: 'fulfilled', value: { runOpen: true, row: { sequence: 1, attempts: 1 } } });
  }, 30_000);
});
