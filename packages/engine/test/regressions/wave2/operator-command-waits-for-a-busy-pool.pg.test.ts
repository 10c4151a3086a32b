import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, type Engine, type Json, type RepairCommand } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';

/**
 * ADR 0078. An operator's command (signal, kick, reclaimStep, cancel, terminate) waits for a pooled
 * connection as long as a run's transactions do (`worker.transaction_wait_ms`), not Prisma's 2 s.
 * Found by wave2/nothing-recorded-after-a-run-ends under load: a cancel and a terminate failed with
 * P2028 "Unable to start a transaction in the given time" while the three engines' runs held the pool.
 * Here the pool has one connection, and the test keeps it taken from the moment the command's
 * transaction asks for it until Prisma's own wait has passed; each command then returns its own
 * outcome. The reads a command sends before its transaction are let through one by one, in the
 * pool's order (first come, first served), so the hold begins exactly at the transaction.
 */
const prismaDefaultMaxWaitMs = 2_000;
/** How long the engine's pool lets a caller wait for a connection before it throws (create-database.ts). */
const poolConnectTimeoutMs = 5_000;
/**
 * How far past a limit the pool stays busy. The hold begins only once the command's transaction is seen
 * waiting, after that limit's timer was set in this same process, so the limit's timer fires first
 * whatever the event loop's lag: a margin is not needed for the order, only to be clearly past (it was 500 ms).
 */
const margin = 200;

const step = defineAction({ name: 'busy-pool-step', run: async () => 'done' });
const flow = defineFlow({
  name: 'busy-pool-operator',
  version: 1,
  run: async (ctx) => {
    const go = await ctx.awaitSignal<Json>('go', { timeoutSeconds: 600 });
    await ctx.action(step, null);
    return go;
  },
});

describe('an operator command on a busy pool (real PostgreSQL)', () => {
  let db: Database;
  let engine: Engine;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 1 });
    // No workers: nothing but the test and the command asks the pool for its one connection.
    engine = bareEngine(db, { flows: [flow], actions: [step] });
  });
  afterAll(async () => {
    await db.close();
  });

  /** Takes the pool's connection (queued behind whoever asked first) until `release` is called. */
  const hold = () => {
    const taken = gate();
    const release = gate();
    const done = db.driver.transaction(async () => {
      taken.open();
      await release.promise;
    });
    return { taken: taken.promise, release: async () => (release.open(), await done) };
  };
  const waiting = (what: string) => waitFor(what, async () => ((db.pool?.waitingCount ?? 0) > 0 ? true : undefined));

  /** Runs `command` (which sends `reads` statements before its transaction) while its transaction finds the pool busy. */
  async function pastABusyPool<T>(
    command: () => Promise<T>,
    reads: number,
    holdMs = prismaDefaultMaxWaitMs + margin,
  ): Promise<T> {
    let holder = hold();
    await holder.taken;
    const outcome = command().then(
      (value) => ({ value }),
      (err: unknown) => ({ err }),
    );
    for (let i = 0; i < reads; i++) {
      await waiting(`read ${i + 1} of the command to ask for the connection`);
      const next = hold(); // queued behind the read: takes the connection once the read gave it back
      await holder.release();
      await next.taken;
      holder = next;
    }
    await waiting("the command's transaction to ask for the connection");
    // The fault: the pool stays busy past the wait Prisma gives a transaction by default (or, below, past
    // the pool's own connect timeout).
    await sleep(holdMs);
    await holder.release();
    const settled = await outcome;
    if ('err' in settled) throw settled.err;
    return settled.value;
  }

  it('signal, kick, reclaimStep, cancel and terminate wait for the connection and return their own outcome', async () => {
    if (!db.pool) throw new Error('this test needs the PostgreSQL project (a connection pool to keep busy)');
    const { runId } = await engine.startFlow(flow, null);
    const outcomes = {
      signal: await pastABusyPool(() => engine.signal(runId, 'go', 'busy'), 1),
      kick: await pastABusyPool(() => engine.kick(runId), 0),
      reclaimStep: await pastABusyPool(() => engine.reclaimStep(runId), 0),
      cancel: await pastABusyPool(() => engine.cancel(runId, { reason: 'busy pool' }), 1),
      terminate: await pastABusyPool(() => engine.terminate(runId, { reason: 'busy pool' }), 1),
    };
    const { signal, reclaimStep, ...rest } = outcomes;
    expect({ signalId: typeof signal.signalId, reclaimStep: Object.keys(reclaimStep).sort(), ...rest }).toEqual({
      signalId: 'string',
      reclaimStep: ['reason', 'reclaimed'], // the run's step is not held by a gone worker: nothing to reclaim
      kick: { kicked: true },
      cancel: { requested: true },
      terminate: { terminated: true },
    });
    expect(reclaimStep.reclaimed).toBe(false);
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe('Terminated');
    const history = await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
    // Each command wrote its history once.
    expect(history.map((e) => e.type)).toEqual([
      'run.started',
      'signal.sent',
      'run.kicked',
      'run.cancel_requested',
      'run.terminated',
    ]);
  }, 120_000);

  it("an operator repair waits past the pool's own connect timeout and applies once (review 20, ADR 0088)", async () => {
    if (!db.pool) throw new Error('this test needs the PostgreSQL project (a connection pool to keep busy)');
    const { runId } = await engine.startFlow(flow, null);
    const status = (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).status;
    const applied = await pastABusyPool(
      () =>
        engine.repairs.apply({
          kind: 'run.terminate',
          target: { runId },
          expected: { runStatus: status },
          actor: 'busy-pool@example.test',
          reason: 'the pool is busy',
          idempotencyKey: `busy-pool-${runId}`,
        } as RepairCommand),
      1, // the read of the run before its transaction (with the fix undone, the transaction throws pg-pool's connect timeout)
      poolConnectTimeoutMs + margin,
    );
    expect(applied.status).toBe('applied');
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const audit = await db.prisma.repairCommand.findMany({ where: { target_id: runId } });
    const terminated = await db.prisma.flowEvent.count({ where: { run_id: runId, type: 'run.terminated' } });
    expect([run.status, audit.map((a) => a.status), terminated]).toEqual(['Terminated', ['applied'], 1]);
  }, 120_000);
});
