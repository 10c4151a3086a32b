import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { seedOpenChain } from '../review65/seed-chain.ts';

/**
 * Review 66, attacking review 65's bound on reasons (ADR 0136's second addendum: "Reasons grew with depth. Each
 * descendant's reason quoted its parent's whole … A descendant now quotes its parent's reason whole up to 1,000
 * characters, and past that its last 1,000 (where the cause is) after an ellipsis").
 *
 * The bound was put into `requestDescendantsCancel` (the cancel, the expiry, a run's end, the terminate's fence).
 * A terminate's batches take each descendant's reason from `listTreeToTerminate` (lock-open-tree.ts), which still
 * quotes the parent's whole: `'parent ' || t.id || ' was terminated: ' || t.reason`. That reason is what the
 * descendant ends with (its `error.message`, its `run.terminated` event). Here P, parked, has a chain of 200 open
 * 'propagate' descendants (the shape a flow that starts itself as its child leaves), and `engine.terminate(P)`.
 *
 * Seen (PostgreSQL, on the base): the deepest descendant's error message is 12,014 characters (60 per level).
 * Measured with a probe not kept: 60,004 at a chain of 1,000 (the terminate took 11.8 s) and 180,004 at 3,000
 * (72.6 s, about 270 MB of messages written; every batch of 100 rebuilds the reasons of the whole tree). Its
 * fenced `cancel_reason` is 1,061 characters, bounded.
 */
describe(`a terminated chain's reasons do not grow with its depth (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  const depth = 200;
  beforeEach(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({ db, flows: [waiter], actions });
  });
  afterEach(async () => {
    await t?.close();
    await db?.close();
  });

  it(`each of a chain of ${depth} ends Terminated quoting at most 1,000 characters of its parent's reason`, async () => {
    const [parent] = await parkedWaiters(t, [3600]);
    const chain = await seedOpenChain(db, parent!, depth);
    expect(await t.engine.terminate(parent!, { reason: 'stopped by ops' })).toEqual({ terminated: true });

    const [row] = await db.prisma.$queryRaw<{ terminated: number; longest: number; longest_event: number }[]>`
      select count(*) filter (where r.status = 'Terminated')::int as terminated,
             max(length(r.error->>'message'))::int as longest,
             (select max(length(e.data->>'error'))::int from "sagaflow"."flow_events" e
               where e.run_id = any(${chain}::uuid[]) and e.type = 'run.terminated') as longest_event
        from "sagaflow"."flow_runs" r where r.id = any(${chain}::uuid[])`;
    const deepest = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: chain[depth - 1]! } });
    const message = (deepest.error as { message?: string } | null)?.message ?? '';
    expect({
      terminated: row!.terminated,
      // `parent <uuid> was terminated: ` (63 characters) and at most an ellipsis and 1,000 characters.
      longestMessage: row!.longest <= 1100,
      deepestMessageLength: message.length <= 1100 ? 'bounded' : message.length,
      deepestNamesItsParent: message.startsWith(`parent ${chain[depth - 2]!} was terminated: `),
    }).toEqual({
      terminated: depth,
      longestMessage: true,
      deepestMessageLength: 'bounded',
      deepestNamesItsParent: true,
    });
  }, 60_000);
});
