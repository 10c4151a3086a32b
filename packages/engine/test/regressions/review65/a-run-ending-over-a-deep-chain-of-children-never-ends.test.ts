import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { seedOpenChain } from './seed-chain.ts';

/**
 * Review 65, attacking ADR 0136's addendum ("one statement per level … Statements: the tree's depth plus
 * one") against ADR 0136's own purpose: a run's end with open children must fit the run transaction's fixed
 * 5 s (`runTransactionTimeoutMs`), else "the run never ended, and its children ran on".
 *
 * ADR 0136 moved the ceiling for a WIDE tree (one statement however many children); the addendum brought back
 * a statement per LEVEL, and nothing bounds a tree's depth (a flow that starts itself as its child, one level
 * per item of a chain, say). Here P, parked, is closed by its run timeout while it has a chain of 3,000 open
 * 'propagate' descendants (each run awaiting one child of its own). On this machine one level costs about
 * 2–3 ms on PostgreSQL and 4 ms on PGlite (a chain of 1,000 ended in 2.8 s and 4.0 s): the end sends 3,001
 * statements and its transaction is rolled back at 5 s, at every try. P never ends, and none of the chain is
 * asked to cancel. Expected: P ends TimedOut at the first try, and each of the 3,000 is asked once.
 */
describe(`a run ending over a deep chain of open children ends (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  const depth = 3_000;
  beforeEach(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({ db, flows: [waiter], actions });
  });
  afterEach(async () => {
    await t?.close();
    await db?.close();
  });

  it(`the run timeout closes a parent over a chain of ${depth} open children, each asked to cancel once`, async () => {
    const [parent] = await parkedWaiters(t, [3600]);
    const chain = await seedOpenChain(db, parent!, depth);
    await db.prisma.flowRun.update({
      where: { id: parent! },
      data: { run_timeout_at: new Date(t.clock.now().getTime() - 1000) },
    });

    const tries: string[] = [];
    for (let i = 0; i < 2; i++) {
      tries.push(
        await executeRun(t.engine.runtime, parent!).then(
          (r) => String(r),
          (err: unknown) => String((err as Error)?.message ?? err).slice(0, 120),
        ),
      );
      if (tries[i] === 'finished') break;
    }
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: parent! } });
    const asked = await db.prisma.flowRun.count({ where: { id: { in: chain }, cancel_requested_at: { not: null } } });
    const deepest = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: chain[depth - 1]! } });
    expect({
      tries,
      status: run.status,
      asked,
      deepestReason: deepest.cancel_reason?.startsWith(`parent ${chain[depth - 2]!} was cancelled: `) ?? null,
    }).toEqual({ tries: ['finished'], status: 'TimedOut', asked: depth, deepestReason: true });
  }, 60_000);
});
