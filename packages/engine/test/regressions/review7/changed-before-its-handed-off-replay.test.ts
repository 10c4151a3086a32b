import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { insertStartedRun } from '../../../src/store/insert-started-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { bareEngine } from '../harness.ts';

const ran: number[] = [];
const touch = defineAction({ name: 'review7-touch', run: async (n: number) => (ran.push(n), n) });
const flow = defineFlow({
  name: 'review7-handed-off',
  version: 1,
  run: async (ctx, n: number) => ctx.action(touch, n),
});

/**
 * Review of ADR 0041. A run its start wrote active is replayed from the row the start returned, not
 * loaded: a terminate or a cancel that commits between the start and that replay is not in the row
 * (version 1, no cancel_requested_at). The claim's fences must still hold: no step runs after a
 * terminate, and a cancel is delivered, never outrun by the step it should have stopped.
 */
describe(`a run changed between its start's commit and its handed-off replay (${testDbKind()})`, () => {
  let db: Database;
  let e: ReturnType<typeof bareEngine>;
  beforeAll(async () => {
    db = await openTestDatabase();
    e = bareEngine(db, { flows: [flow], actions: [touch] });
  });
  afterAll(async () => {
    await db.close();
  });

  /** What `startFlow` does when its pool takes the run: written active, the row kept for the replay. */
  const startHandedOff = async (n: number) => {
    const started = await insertStartedRun(db.prisma, {
      flowName: flow.name,
      flowVersion: flow.version,
      input: n,
      businessKey: null,
      tags: [],
      expiresAt: null,
      runTimeoutAt: null,
      now: e.runtime.clock.now(),
      lease: { workerId: e.runtime.workerId, leaseSeconds: 60 },
    });
    if (!started.job || !started.loaded) throw new Error('the start wrote no leased wake');
    e.runtime.startedActive.set(started.job.id, started.loaded);
    return { runId: started.runId, ack: { id: started.job.id, workerId: e.runtime.workerId, done: false } };
  };
  const history = async (runId: string) =>
    (await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } })).map((x) => x.type);

  it('terminated first: the replay claims nothing and writes nothing after run.terminated', async () => {
    ran.length = 0;
    const { runId, ack } = await startHandedOff(1);
    await e.terminate(runId, { reason: 'review7' });
    await executeRun(e.runtime, runId, ack);
    expect(ran).toEqual([]);
    expect(e.runtime.startedActive.size).toBe(0);
    const row = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(row.status).toBe('Terminated');
    expect((await history(runId)).at(-1)).toBe('run.terminated');
    expect(await db.prisma.actionRun.count({ where: { run_id: runId, status: 'Running' } })).toBe(0);
  });

  it('cancelled first: the step never runs and the run ends Cancelled', async () => {
    ran.length = 0;
    const { runId, ack } = await startHandedOff(2);
    await e.cancel(runId, { reason: 'review7' });
    await executeRun(e.runtime, runId, ack);
    expect(ran).toEqual([]);
    // The cancel's own wake: a replay that loads the run and sees the request.
    await executeRun(e.runtime, runId);
    expect(ran).toEqual([]);
    const row = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(row.status).toBe('Cancelled');
    const events = await history(runId);
    expect(events.filter((t) => t === 'run.running')).toHaveLength(1);
    expect(events.indexOf('run.cancel_requested')).toBeGreaterThan(events.indexOf('run.running'));
    expect(events.at(-1)).toBe('run.cancelled');
  });
});
