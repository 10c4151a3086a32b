import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine } from '../harness.ts';
import { leftUndoneOf } from './support/left-undone.ts';

/**
 * Review 22. ADR 0091's record list: "every completed forward action without a completed
 * compensation". The record keys compensations by `action_sequence` only, and a compensation the flow
 * registers directly (`ctx.addCompensation`) takes the sequence of the last step (session.sequence):
 * so a step with a compensation of its own (compensateWith) followed by a direct one has two
 * compensation rows with the same action_sequence. The rollback runs the direct one first (newest
 * first); when it completes and the step's own compensation has not (here it failed and waits an hour
 * for its retry), the step is still not undone, yet the terminate's list does not name it.
 */
describe(`run.terminate after a direct compensation completed (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('a step whose own compensation did not complete is listed left undone, whatever else completed at its sequence', async () => {
    const reserve = defineAction({ name: 'review22-dc-reserve', run: async () => 'seat' });
    const release = defineAction({
      name: 'review22-dc-release',
      retry: { maxAttempts: 3, backoff: { initialMs: 3_600_000, jitter: false } },
      run: async () => {
        throw new Error('the seat service is down');
      },
    });
    const notify = defineAction({ name: 'review22-dc-notify', run: async () => null });
    const boom = defineAction({
      name: 'review22-dc-boom',
      run: async () => {
        throw new Error('payment declined');
      },
    });
    const flow = defineFlow({
      name: 'review22-dc-flow',
      version: 1,
      run: async (ctx) => {
        try {
          await ctx
            .action(reserve, null)
            .compensateWith(release, () => null)
            .run();
          ctx.addCompensation(notify, null);
          await ctx.action(boom, null).run();
          return null;
        } catch (err) {
          await ctx.compensate();
          throw err;
        }
      },
    });
    const e = bareEngine(db, { flows: [flow], actions: [reserve, release, notify, boom] });
    const { runId } = await e.startFlow(flow, null);
    // Replays until the rollback waits for the release's retry (notify done, release failed once).
    await waitFor('the release to wait for its retry', async () => {
      await executeRun(e.runtime, runId);
      const rel = await db.prisma.compensationRun.findFirst({ where: { run_id: runId, name: release.name } });
      return rel?.status === 'Failed' ? rel : undefined;
    });
    const before = await leftUndoneOf(db, runId);
    expect(before.rows.filter((r) => r[1] === 'action')).toEqual([
      [1, 'action', reserve.name, 'Completed'],
      [2, 'action', boom.name, 'Errored'],
    ]);
    expect(before.compensations).toEqual([
      [1, notify.name, 'Completed'],
      [1, release.name, 'Failed'],
    ]);

    await e.terminate(runId, { reason: 'review22: the release will not come back' });
    const l = await leftUndoneOf(db, runId);
    expect(l.status).toBe('Terminated');
    expect(l.onEvent).toEqual(l.stated);
    // The reservation was never released: the run must say so.
    expect(l.stated).toEqual({
      source: 'record',
      steps: [{ sequence: 1, name: reserve.name, compensation: null }],
    });
  });
});
