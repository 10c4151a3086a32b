import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../src/index.ts';
import { openTestEngine } from '../support/open-test-engine.ts';
import { testDbKind } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

/**
 * run-claimable-step.ts:52-72: with locks.enabled the overlap lock is taken first and the claim
 * second, in one transaction. When the claim then updates no row (here: a Failed row whose retry
 * time has not come, i.e. seed 000's "job left over from a superseded retry cycle"), the callback
 * returns normally, so the transaction COMMITS the lock. Nobody owns that execution; the lock is
 * released only when its TTL passes (locks.action_ttl_seconds, 900 s by default). When the retry
 * comes due, the real retry meets the leaked lock, is sent back to the queue every 4 poll
 * intervals, and the step is delayed by up to the TTL.
 */
let tries = 0;
const flaky = defineAction({
  name: 'flaky',
  retry: { maxAttempts: 3, backoff: { initialMs: 5_000, jitter: false } },
  run: async () => {
    tries += 1;
    if (tries === 1) throw new Error('first try fails');
    return { ok: true };
  },
});
const flow = defineFlow({ name: 'retry-with-locks', version: 1, run: async (ctx) => ctx.action(flaky, null) });

describe(`regression (review): overlap lock taken by a claim that lost (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [flow],
      actions: [flaky],
      config: { locks: { enabled: true, action_ttl_seconds: 900 } },
    });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('a stale wake of a Failed row leaves no lock behind, and the retry runs when due', async () => {
    const { runId } = await t.engine.startFlow(flow, null);
    const failed = await t.drive(runId, { skipTime: false, until: (d) => d.actions[0]?.status === 'Failed' });
    const rowId = failed.actions[0]!.id;
    expect(await t.db.prisma.lock.count()).toBe(0); // released with the 'failed' outcome

    // A stale wake (superseded retry cycle / duplicate delivery) replays the run before the retry is due.
    await t.faults.duplicateDelivery(runId, 1);
    // The locks are read once the pool has replayed that wake: a worker deletes a job only after its
    // replay returned, and the retry's own job is not due yet, so no due job left for the run means the
    // lost claim (and whatever lock it took) has committed or rolled back. Read sooner, they would show
    // no lock whether or not one leaks.
    await waitFor(
      'the pool to replay the stale wake and acknowledge its job',
      async () =>
        (await t.db.prisma.job.count({ where: { run_id: runId, available_at: { lte: t.clock.now() } } })) === 0
          ? true
          : undefined,
      30_000,
    );
    const locks = await t.db.prisma.lock.findMany({ where: { key: `step:action_runs:${rowId}` } });
    const d = await t.drive(runId, { timeoutMs: 8_000 }).catch((e: unknown) => (e as Error).message);
    expect({ leakedLocks: locks.length, result: typeof d === 'string' ? d : d.run.status, tries }).toEqual({
      leakedLocks: 0,
      result: 'Completed',
      tries: 2,
    });
  });
});
