import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../src/index.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

const ran: string[] = [];
const step = (name: string) => defineAction({ name, run: async (n: number) => (ran.push(name), n + 1) });
const [a, b, c] = [step('hand-a'), step('hand-b'), step('hand-c')];
const flow = defineFlow({
  name: 'hand-off',
  version: 1,
  run: async (ctx, n: number) => ctx.action(c, await ctx.action(b, await ctx.action(a, n))),
});

describe(`a start hands its run to its own pool, and a crash leaves it to the lease (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [flow],
      actions: [a, b, c],
      config: { reclaim: { actions: { enabled: true, after_seconds: 5 } }, worker: { lease_seconds: 60 } },
    });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('a worker killed between two back-to-back steps: the job is redelivered and each step has one outcome', async () => {
    t.engine.startWorkers();
    // The worker dies once it has claimed the second step, with the first one's outcome committed.
    t.faults.crashAfterClaim('hand-b');
    const { runId } = await t.engine.startFlow(flow, 1);
    // While this worker runs the run, its wake stays in the table, leased to it: a crash leaves it there.
    const [job] = await t.db.prisma.job.findMany({ where: { run_id: runId } });
    expect(job).toMatchObject({ locked_by: t.engine.runtime.workerId, deliveries: 1 });
    await waitFor('the crash after the second claim', async () =>
      (await t.db.prisma.actionRun.count({ where: { run_id: runId, name: 'hand-b', status: 'Running' } })) === 1
        ? true
        : undefined,
    );
    expect((await t.engine.getRun(runId))?.run.status).not.toBe('Completed');
    // Past the job's lease and the step's reclaim deadline, the job comes back and the run finishes.
    t.clock.advance(61_000);
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('Completed');
    expect(done.run.output).toBe(4);
    // The crash came before the second action ran: each action ran once.
    expect(ran).toEqual(['hand-a', 'hand-b', 'hand-c']);
    const rows = await t.db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    expect(rows.map((r) => [r.name, r.status, r.attempts])).toEqual([
      ['hand-a', 'Completed', 1],
      ['hand-b', 'Completed', 2],
      ['hand-c', 'Completed', 1],
    ]);
    const completed = await t.db.prisma.flowEvent.findMany({ where: { run_id: runId, type: 'action.completed' } });
    expect(completed.map((e) => e.sequence).sort()).toEqual([1, 2, 3]);
    // The finishing transaction acknowledged the redelivered job: nothing is left to wake the run.
    expect(await t.db.prisma.job.count({ where: { run_id: runId } })).toBe(0);
  });
});
