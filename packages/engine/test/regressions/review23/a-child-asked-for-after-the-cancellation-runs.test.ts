import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, FlowError, type Json } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { bareEngine, gate } from '../harness.ts';
import { childrenOf, runDueWakes } from './support/sibling-children.ts';

/**
 * ADR 0093 cancels a 'propagate' child whose start commits under a cancelled parent, when the flow's code
 * asked for it before it could see the cancellation. A child the code asks for once it has caught the
 * cancellation (a clean-up flow started from the catch) is the code's own choice: it is started without a
 * cancel request and runs to its end, and the parent, which returns normally, ends Completed (ADR 0006).
 */
describe(`a child asked for after the code caught the cancellation (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('runs to its end, uncancelled, and the parent completes', async () => {
    const ran: string[] = [];
    const held = { reached: gate(), release: gate() };
    const work = defineAction({
      name: 'review23-cleanup-work',
      run: async () => {
        ran.push('work');
        held.reached.open();
        await held.release.promise;
        return 'worked';
      },
    });
    const tidy = defineAction({
      name: 'review23-cleanup-tidy',
      run: async () => {
        ran.push('tidy');
        return 'tidied';
      },
    });
    const cleanUp = defineFlow({
      name: 'review23-cleanup-child',
      version: 1,
      run: async (ctx) => ctx.action(tidy, null),
    });
    const parent = defineFlow({
      name: 'review23-cleanup-parent',
      version: 1,
      run: async (ctx): Promise<Json> => {
        try {
          await ctx.action(work, null).run();
          return await ctx.action(work, null).run();
        } catch (err) {
          if (!(err instanceof FlowError) || err.code !== 'cancelled') throw err;
          return { cleanedUp: await ctx.child(cleanUp, null) };
        }
      },
    });
    const e = bareEngine(db, { flows: [parent, cleanUp], actions: [work, tidy] });
    const { runId } = await e.startFlow(parent, null);
    const first = executeRun(e.runtime, runId);
    await held.reached.promise;
    await e.cancel(runId, { reason: 'review23: stop', cleanupSeconds: 60 });
    held.release.open();
    await first;
    await runDueWakes(db, e, runId);

    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const kids = await childrenOf(db, runId);
    expect({
      parent: [run.status, run.output],
      children: kids.map((c) => [c.status, c.cancel_requested_at === null]),
      ran,
    }).toEqual({
      parent: ['Completed', { cleanedUp: 'tidied' }],
      children: [['Completed', true]],
      ran: ['work', 'tidy'],
    });
  });
});
