import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';

/** ADR 0007: an expired parent cancels its 'propagate' children; 'abandon' children go on alone. */
const log: string[] = [];
const reserve = defineAction({
  name: 'ax-ch-reserve',
  run: async (i: { id: string }) => (log.push(`reserve ${i.id}`), i),
});
const unreserve = defineAction({
  name: 'ax-ch-unreserve',
  run: async (i: { id: string }) => (log.push(`unreserve ${i.id}`), i),
});
const child = defineFlow({
  name: 'ax-ch-child',
  version: 1,
  run: async (ctx) => {
    await ctx.awaitSignal('done', { timeoutSeconds: 86_400 });
    return { child: 'ok' };
  },
});
const parent = defineFlow({
  name: 'ax-ch-parent',
  version: 1,
  run: async (ctx, input: { id: string; cancellation: 'propagate' | 'abandon' }) => {
    try {
      await ctx.action(reserve, { id: input.id }).compensateWith(unreserve, (o) => ({ id: o.id }));
      return await ctx.child(child, null, { cancellation: input.cancellation });
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe(`adversarial expiry: a parent with a child (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [parent, child], actions: [reserve, unreserve] });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  for (const cancellation of ['propagate', 'abandon'] as const) {
    it(`child started with '${cancellation}'`, async () => {
      const id = `p-${cancellation}`;
      const { runId } = await t.engine.startFlow(parent, { id, cancellation }, { expiresInSeconds: 60 });
      await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
      const kid = await t.db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: runId } });
      await t.drive(kid.id, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
      t.clock.advance(61_000);
      expect((await t.engine.sweepExpiredRuns()).expired).toEqual([runId]);
      const done = await t.drive(runId, { skipTime: false });
      expect(done.run.status).toBe('Expired');
      expect(log.filter((l) => l === `unreserve ${id}`)).toHaveLength(1);
      const kidRow = await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: kid.id } });
      if (cancellation === 'propagate') {
        expect((await t.drive(kid.id, { skipTime: false })).run.status).toBe('Cancelled');
      } else {
        expect(kidRow.cancel_requested_at).toBeNull();
        await t.engine.signal(kid.id, 'done');
        expect((await t.drive(kid.id, { skipTime: false })).run.status).toBe('Completed');
        const after = await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        expect(after.status).toBe('Expired');
      }
    });
  }
});
