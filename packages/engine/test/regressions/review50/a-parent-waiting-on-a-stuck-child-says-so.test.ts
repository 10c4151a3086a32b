import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * Review 50: a child run that is stuck (here `unknown_flow`: no worker registers its flow, ADR 0112)
 * holds its parent for as long as it is stuck. The parent is what on-call finds first (the order's
 * business key is the parent's); Camunda Operate marks a parent whose called child has an incident.
 * Our promise is that every stuck run is visible with its reason: the parent, which cannot move
 * without help either, must say so (a stuck reason naming the stuck child), or at least its wait must
 * say the child is stuck, not only "child run <id>" as a healthy wait does.
 */
const work = defineAction({ name: 'r50-child-work', run: async () => ({ ok: true }) });
const child = defineFlow({
  name: 'r50-unregistered-child',
  version: 1,
  run: async (ctx) => {
    await ctx.action(work, null).run();
    return null;
  },
});
const parent = defineFlow({
  name: 'r50-parent-of-stuck',
  version: 1,
  run: async (ctx) => {
    await ctx.child(child, null);
    return null;
  },
});

describe(`review 50: a parent waiting on a stuck child is visibly stuck (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    // The child's flow is registered on no worker: its run is handed back stuck `unknown_flow`.
    t = await openTestEngine({ flows: [parent], actions: [work] });
  });
  afterAll(async () => t?.closeAll());

  it('the parent of a child stuck unknown_flow shows a reason naming the stuck child', async () => {
    const { runId } = await t.engine.startFlow(parent, null);
    t.engine.startWorkers();
    // ADR 0124 (fix 50): the monitor sets and clears a parent's `child_stuck` reason, as it does `owner_gone`.
    t.engine.startMonitor({ intervalMs: 100 });
    const stuckChild = await waitFor(
      'the child to be stuck unknown_flow',
      async () => {
        const c = await t.db.prisma.flowRun.findFirst({ where: { parent_run_id: runId } });
        return c?.stuck_reason?.startsWith('unknown_flow') ? c : undefined;
      },
      20_000,
    );
    const p = await waitFor(
      'the parent to park on its child and the monitor to say the child is stuck',
      async () => {
        const d = await t.engine.getRun(runId);
        return d?.run.status === 'Waiting' && d.run.stuckReason !== null ? d : undefined;
      },
      20_000,
    ).catch(async () => (await t.engine.getRun(runId))!);
    // The stuck list (runs.page stuckOnly: stuck_reason is not null) is what on-call reads.
    const inStuckList = await t.db.prisma.flowRun.count({ where: { id: runId, stuck_reason: { not: null } } });
    const says = `${p.run.stuckReason ?? ''} ${p.run.waitingFor ?? ''}`;
    expect(
      {
        parentInStuckList: inStuckList === 1,
        namesTheChild: says.includes(stuckChild.id),
        saysItIsStuck: /stuck|unknown_flow/.test(says),
      },
      `parent: stuckReason=${p.run.stuckReason} waitingFor=${p.run.waitingFor}`,
    ).toEqual({ parentInStuckList: true, namesTheChild: true, saysItIsStuck: true });
    expect(p.run.stuckReason).toBe(`child_stuck: child run ${stuckChild.id} is stuck (${stuckChild.stuck_reason})`);
    expect(p.run.safeRepairs).toEqual(['run.kick', 'run.terminate']);
    expect(p.events.filter((e) => e.type === 'run.stuck').length).toBe(1);
  }, 60_000);
});
