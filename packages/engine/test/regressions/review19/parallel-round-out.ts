import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, type EngineOptions, type Engine } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';

/**
 * Reviews 19 and 20: a flow whose first replay (A) holds both branches of a parallel round, x and y, each
 * compensated by `undo` (its input says which), with `after` behind the round. Each branch waits in its
 * action at its gate (`x`, `y`: reached, then release); `log` lists what ran, in order. The flow's catch
 * compensates when `compensateOn(err)` says so. Resolves once both branches are Running under A.
 */
export async function parallelRoundOut(
  db: Database,
  opts: {
    tag: string;
    compensateOn: (err: unknown) => boolean;
    config?: EngineOptions['config'];
    expiresInSeconds?: number;
    beforeStart?: (e: Engine) => void;
  },
) {
  const { tag } = opts;
  const clock = new TestClock();
  const log: string[] = [];
  const x = { reached: gate(), release: gate() };
  const y = { reached: gate(), release: gate() };
  const branch = (name: string, at: typeof x) =>
    defineAction({
      name: `${tag}-${name}`,
      run: async () => {
        log.push(name);
        at.reached.open();
        await at.release.promise;
        return name;
      },
    });
  const branchX = branch('x', x);
  const branchY = branch('y', y);
  const undo = defineAction({
    name: `${tag}-undo`,
    run: async (what: unknown) => (log.push(`undo-${String(what)}`), null),
  });
  const after = defineAction({ name: `${tag}-after`, run: async () => (log.push('after'), 'after') });
  const flow = defineFlow({
    name: `${tag}-round`,
    version: 1,
    run: async (ctx) => {
      try {
        const both = await ctx.parallel([
          ctx.action(branchX, null).compensateWith(undo, () => 'x'),
          ctx.action(branchY, null).compensateWith(undo, () => 'y'),
        ]);
        return [both, await ctx.action(after, null)];
      } catch (err) {
        if (opts.compensateOn(err)) await ctx.compensate();
        throw err;
      }
    },
  });
  const e = bareEngine(db, {
    flows: [flow],
    actions: [branchX, branchY, undo, after],
    clock,
    ...(opts.config ? { config: opts.config } : {}),
  });
  opts.beforeStart?.(e);
  const { runId } = await e.startFlow(
    flow,
    null,
    opts.expiresInSeconds === undefined ? {} : { expiresInSeconds: opts.expiresInSeconds },
  );
  const liveA = executeRun(e.runtime, runId);
  await x.reached.promise;
  await y.reached.promise;
  await waitFor('both branches Running', async () => {
    const rows = await db.prisma.actionRun.findMany({ where: { run_id: runId, status: 'Running' } });
    return rows.length === 2 ? true : undefined;
  });
  return { e, runId, x, y, liveA, log, clock, undoName: undo.name };
}
