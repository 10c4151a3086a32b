import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { defineAction, defineFlow, NonRetryableError } from '../../src/index.ts';
import { executeRun } from '../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';
import { bareEngine, gate, within } from './harness.ts';

/**
 * ctx.parallel (create-flow-context.ts:167-169) settles branch results in index order; an 'errored'
 * branch before a 'pending' one throws action_failed into the flow although the sibling is still
 * executing on another worker (a duplicate delivery). The flow compensates what it knows about and
 * the run finishes. The sibling then succeeds (a real booking), its outcome is refused
 * (write_refused), its compensation is never registered, and its row stays Running for ever.
 */
const log: string[] = [];
const slowGate = gate();
const book0 = defineAction({ name: 'book-0', run: async () => (log.push('book-0'), { id: 'b0' }) });
const undo0 = defineAction({ name: 'undo-0', run: async () => (log.push('undo-0'), null) });
const failFast = defineAction({
  name: 'fail-fast',
  run: async () => {
    throw new NonRetryableError('declined');
  },
});
const slowBook = defineAction({
  name: 'slow-book',
  run: async () => {
    await slowGate.promise;
    log.push('slow-book done');
    return { id: 'slow' };
  },
});
const undoSlow = defineAction({ name: 'undo-slow', run: async () => (log.push('undo-slow'), null) });
const flow = defineFlow({
  name: 'parallel-fail-fast',
  version: 1,
  run: async (ctx) => {
    try {
      await ctx.action(book0, null).compensateWith(undo0, () => null);
      await ctx.parallel([ctx.action(failFast, null), ctx.action(slowBook, null).compensateWith(undoSlow, () => null)]);
      return null;
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});
const actions = [book0, undo0, failFast, slowBook, undoSlow];

describe(`regression (review): a parallel block that raises while a sibling is still in flight (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    slowGate.open();
    await db.close();
  });

  it('every branch that succeeded is compensated; the run does not finish under a running step', async () => {
    const e = bareEngine(db, { flows: [flow], actions });
    const { runId } = await e.startFlow(flow, null);
    await db.prisma.job.deleteMany({ where: { run_id: runId } });
    const row = (name: string) => db.prisma.actionRun.findFirst({ where: { run_id: runId, name } });

    const first = executeRun(e.runtime, runId); // runs both branches; slow-book is held
    await waitFor('fail-fast Errored and slow-book Running', async () =>
      (await row('fail-fast'))?.status === 'Errored' && (await row('slow-book'))?.status === 'Running'
        ? true
        : undefined,
    );
    const duplicate = await executeRun(e.runtime, runId); // a duplicate delivery of the wake
    slowGate.open();
    await within(first, 10_000);

    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const slow = await row('slow-book');
    const refused = await db.prisma.anomalyLog.count({ where: { run_id: runId, code: 'write_refused' } });
    expect({
      duplicate,
      status: run.status,
      slowBook: slow?.status,
      refused,
      undone: log.filter((l) => l.startsWith('undo')).sort(),
    }).toEqual({
      duplicate: 'parked', // the block is not settled while a branch is in flight
      status: 'Compensated', // the last finisher carried the run on and compensated both bookings
      slowBook: 'Completed',
      refused: 0,
      undone: ['undo-0', 'undo-slow'],
    });
  });
});
