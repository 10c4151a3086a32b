import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../src/index.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';

let executions = 0;
const work = defineAction({ name: 'work', run: async () => (executions++, { done: true }) });
const flow = defineFlow({ name: 'one-work', version: 1, run: async (ctx) => ctx.action(work, null) });

describe(`claim_not_committed: the aborted-transaction case of seed 000 (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  let sabotage = true;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [flow],
      actions: [work],
      hooks: {
        // A listener inside the claim's transaction runs a failing query and swallows the error.
        // On PostgreSQL that aborts the transaction: its COMMIT becomes a ROLLBACK.
        stepClaimed: async (tx) => {
          if (!sabotage) return;
          try {
            await tx.$executeRawUnsafe('insert into no_such_table values (1)');
          } catch {
            // swallowed, as a careless listener would
          }
        },
      },
    });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('a claim that did not commit is journaled, the step does not run, and the run is visibly stuck', async () => {
    const { runId } = await t.engine.startFlow(flow, null);
    const d = await t.drive(runId, {
      skipTime: false,
      until: (x) => x.run.stuckReason !== null || x.run.status === 'Completed',
    });
    expect(executions).toBe(0);
    expect(d.run.status).toBe('Waiting');
    expect(d.run.stuckReason).toMatch(/^claim_not_committed/);
    // The step's row was written in the claim's transaction, so nothing of it survived either.
    expect(d.actions.filter((s) => s.kind === 'action')).toEqual([]);
    const anomaly = await t.db.prisma.anomalyLog.findFirstOrThrow({
      where: { run_id: runId, code: 'claim_not_committed' },
    });
    expect(anomaly.details).toMatchObject({ claimed_attempts: 1, row_attempts: null });
    // Once the listener is fixed, the next delivery runs the step.
    sabotage = false;
    await t.faults.duplicateDelivery(runId, 1);
    expect((await t.drive(runId, { skipTime: false })).run.status).toBe('Completed');
    expect(executions).toBe(1);
  });
});
