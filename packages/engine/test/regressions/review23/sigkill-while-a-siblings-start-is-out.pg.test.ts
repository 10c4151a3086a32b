import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { holdRuns } from '../../support/held-rows.ts';
import { childWorkerSuite } from '../../support/spawn-worker.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine } from '../harness.ts';
import { lockWaiters } from '../review21/lock-waiters.ts';
import { killFlows } from './support/kill-flows.ts';
import { judgeSiblings, runDueWakes } from './support/sibling-children.ts';

const workerScript = fileURLToPath(new URL('./support/kill-worker.ts', import.meta.url));
const WAIT_MS = 60_000;

/**
 * Review 23. `await Promise.all([ctx.child(A), ctx.child(B)])` run by a real worker process whose check of
 * B's input never returns, so B's start is out for as long as it lives. Its first replay starts A and
 * parks on it; A runs and wakes the parent; the second replay holds the parent's job with B's start out
 * again (its second `b-check`). The process is SIGKILLed there; its job lease is let lapse (aged on the
 * database clock) and this process recovers the tree by replaying what is due.
 *
 * Guarantees: each child is started once (one run and one `child.started` per sequence), its outcome
 * recorded once (one `child.finished`); A's action ran once in all; the parent ends once, Completed with
 * both outputs, nothing after its end; no child is left open.
 */
describe("SIGKILL while a sibling child's start is out (real PostgreSQL, real process)", () => {
  const suite = childWorkerSuite();

  it('the worker dies with the parent job held and B unstarted; the tree recovers once', async () => {
    const { db } = suite;
    const child = await suite.spawn(workerScript);
    const ranHere: string[] = [];
    const starter = killFlows(
      () => Promise.resolve(),
      (name) => ranHere.push(name),
    );
    const starting = bareEngine(db, { flows: starter.flows, actions: starter.actions });
    const { runId } = await starting.startFlow(starter.parent, null);
    await child.printed(/^b-check 2$/m, WAIT_MS);
    // The second replay holds the parent's job; A is over.
    const held = await waitFor(
      'the child worker to hold the parent job',
      async () => (await db.prisma.job.findFirst({ where: { run_id: runId, locked_by: child.workerId } })) ?? undefined,
      WAIT_MS,
    );
    expect(held.locked_by).toBe(child.workerId);
    expect(await child.kill()).toBe('SIGKILL');
    const before = await judgeSiblings(db, runId);
    expect([before.parent.status, before.runsPerSeq, before.children.map((c) => [c.seq, c.status])]).toEqual([
      'Running',
      { 2: 1 },
      [[2, 'Completed']],
    ]);

    // The dead worker's lease lapses; this process replays what is due (its clock starts after the kill).
    await db.prisma
      .$executeRaw`update "sagaflow"."jobs" set locked_until = now() - interval '1 hour' where locked_by = ${child.workerId}`;
    const ranAfter: string[] = [];
    const recovery = killFlows(
      () => Promise.resolve(),
      (name) => ranAfter.push(name),
    );
    const e = bareEngine(db, { flows: recovery.flows, actions: recovery.actions });
    const { openAtParentEnd } = await runDueWakes(db, e, runId);
    const judged = await judgeSiblings(db, runId);
    expect({ ...judged, openAtParentEnd, ranAfter: ranAfter.sort() }).toEqual({
      parent: {
        status: 'Completed',
        ends: 1,
        afterTheEnd: [],
        compensations: [],
        duplicateStepOutcomes: [],
        output: ['work-a:"a"', 'work-b:"b"'],
      },
      childStarted: { 2: 1, 3: 1 },
      childFinished: { 2: 1, 3: 1 },
      runsPerSeq: { 2: 1, 3: 1 },
      children: [2, 3].map((seq) => ({
        seq,
        status: 'Completed',
        open: false,
        ends: 1,
        afterTheEnd: [],
        cancelRequested: false,
      })),
      orphans: [],
      openAtParentEnd: [],
      ranAfter: ['work-b'],
    });
  });

  it("the worker dies with both starts waiting on the parent's row, uncommitted; the tree recovers once", async () => {
    const { db } = suite;
    const child = await suite.spawn(workerScript, { args: ['stdin'] });
    const starter = killFlows(
      () => Promise.resolve(),
      () => undefined,
    );
    const starting = bareEngine(db, { flows: starter.flows, actions: starter.actions });
    const { runId } = await starting.startFlow(starter.parent, null);
    // R1 (in the worker) has booked and asked for A and B; both checks wait for a line.
    await Promise.all([child.printed(/^a-check$/m, WAIT_MS), child.printed(/^b-check 1$/m, WAIT_MS)]);
    const holder = await holdRuns(suite.url, [runId]);
    child.say();
    child.say();
    // Both starts' transactions now wait on the parent's row (held here): neither has committed.
    await lockWaiters(db, 2);
    expect(await child.kill()).toBe('SIGKILL');
    await holder.commit();
    // The dead worker's backends end without a commit (nothing of theirs may land).
    await waitFor(
      "the dead worker's transactions to end",
      async () => {
        const rows = await db.prisma.$queryRaw<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
           where datname = current_database() and (state like 'idle in transaction%' or wait_event_type = 'Lock')`;
        return rows[0]?.n === 0 ? true : undefined;
      },
      WAIT_MS,
    );
    // Nothing of the dead worker's landed: no child, and the booking's outcome, which its replay held for
    // the next transaction (A's start), is lost with it: step 1 stays Running under the dead worker.
    const before = await judgeSiblings(db, runId);
    const step1 = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 1 } });
    expect([before.runsPerSeq, before.childStarted, step1.status, step1.claimed_by]).toEqual([
      {},
      {},
      'Running',
      child.workerId,
    ]);

    // Its lease and heartbeat lapse; a replay here finds step 1 held by a gone worker (owner_gone, ADR 0023),
    // and the safe repair runs it again (at least once for a dead worker's step, by design).
    await db.prisma
      .$executeRaw`update "sagaflow"."jobs" set locked_until = now() - interval '1 hour' where locked_by = ${child.workerId}`;
    await db.prisma
      .$executeRaw`update "sagaflow"."workers" set heartbeat_at = now() - interval '1 hour' where id = ${child.workerId}`;
    const ranAfter: string[] = [];
    const recovery = killFlows(
      () => Promise.resolve(),
      (name) => ranAfter.push(name),
    );
    const e = bareEngine(db, { flows: recovery.flows, actions: recovery.actions });
    await runDueWakes(db, e, runId);
    const stuck = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(stuck.stuck_reason ?? '').toMatch(/^owner_gone: step 1 /);
    const reclaimed = await e.repairs.apply({
      kind: 'run.reclaim_step',
      target: { runId, stepSequence: 1 },
      expected: { runStatus: stuck.status as 'Waiting', stepStatus: 'Running', stepAttempts: step1.attempts },
      actor: 'review23@example.test',
      reason: 'review23: its worker was killed',
      idempotencyKey: `review23-reclaim-${runId}`,
    });
    expect(reclaimed.status).toBe('applied');
    const { openAtParentEnd } = await runDueWakes(db, e, runId);
    const judged = await judgeSiblings(db, runId);
    expect({ ...judged, openAtParentEnd, ranAfter: ranAfter.sort() }).toEqual({
      parent: {
        status: 'Completed',
        ends: 1,
        afterTheEnd: [],
        compensations: [],
        duplicateStepOutcomes: [],
        output: ['work-a:"a"', 'work-b:"b"'],
      },
      childStarted: { 2: 1, 3: 1 },
      childFinished: { 2: 1, 3: 1 },
      runsPerSeq: { 2: 1, 3: 1 },
      children: [2, 3].map((seq) => ({
        seq,
        status: 'Completed',
        open: false,
        ends: 1,
        afterTheEnd: [],
        cancelRequested: false,
      })),
      orphans: [],
      openAtParentEnd: [],
      ranAfter: ['book', 'work-a', 'work-b'],
    });
  });
});
