import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';

const book = defineAction({ name: 'review12-book', run: async (i: { id: string }) => ({ booking: `b-${i.id}` }) });
const cancel = defineAction({ name: 'review12-cancel', run: async (i: { booking: string }) => i });
const refuse = defineAction({
  name: 'review12-refuse',
  run: async (_: null): Promise<null> => {
    throw new Error('refused');
  },
});
const saga = defineFlow({
  name: 'review12-saga',
  version: 1,
  run: async (ctx, i: { id: string }) => {
    try {
      await ctx.action(book, i).compensateWith(cancel, (o) => ({ booking: o.booking }));
      await ctx.action(book, { id: `${i.id}-2` }).compensateWith(cancel, (o) => ({ booking: o.booking }));
      return await ctx.action(refuse, null);
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

type Opened = Awaited<ReturnType<typeof openTestEngine>>;

/**
 * ADR 0058 reviewed (ADR 0061): the flow context's helpers (settle, register, the compensation's
 * reclaim) moved from closures made per replay to module level, taking the replay's session. Runs
 * of two engines with different settings, replayed side by side in one process, must each register
 * their own compensations, with their own inputs and their own engine's reclaim threshold.
 */
describe(`the flow context's module-level helpers share nothing between runs (${testDbKind()})`, () => {
  const engines: Opened[] = [];
  beforeAll(async () => {
    for (const after_seconds of [111, 222])
      engines.push(
        await openTestEngine({
          flows: [saga],
          actions: [book, cancel, refuse],
          config: {
            worker: { concurrency: 8 },
            reclaim: { compensations: { enabled: true, after_seconds } },
          },
        }),
      );
  });
  afterAll(async () => {
    for (const t of engines) await t.closeAll();
  });

  it("each run's compensations carry its own bookings and its own engine's reclaim threshold", async () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    const done = await Promise.all(
      engines.flatMap((t, e) =>
        ids.map(async (id) => ({ e, id, detail: await t.runToCompletion(saga, { id: `${e}${id}` }) })),
      ),
    );
    for (const { e, id, detail } of done) {
      expect(detail.run.status).toBe('Compensated');
      const comps = await engines[e]!.db.prisma.compensationRun.findMany({
        where: { run_id: detail.run.id },
        orderBy: { action_sequence: 'asc' },
      });
      expect(comps.map((c) => [c.input, c.reclaim_stale_after_seconds])).toEqual([
        [{ booking: `b-${e}${id}` }, [111, 222][e]],
        [{ booking: `b-${e}${id}-2` }, [111, 222][e]],
      ]);
    }
  });
});
