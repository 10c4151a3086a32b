import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { defineFlow, type Engine, type Json, type RepairCommand } from '../../src/index.ts';
import { openTestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';
import { bareEngine, gate } from '../regressions/harness.ts';

/** How long the engine's pool lets a caller wait for a connection before it throws (create-database.ts). */
const poolConnectTimeoutMs = 5_000;

const flow = defineFlow({
  name: 'busy-pool-reads',
  version: 1,
  run: async (ctx) => ctx.awaitSignal<Json>('go', { timeoutSeconds: 600 }),
});

/**
 * ADR 0078 made an operator's command wait for a busy pool in its transaction; the statements it sends
 * before (the run read by a signal, cancel or terminate, the idempotency key's earlier result and the
 * run's state a repair reads) still threw the pool's connect timeout after 5 s. CI found it: 200 repairs
 * at once on a loaded machine, each failing with "timeout exceeded when trying to connect" before its
 * transaction began. Here the pool's one connection is held from before the commands are sent until past
 * the pool's own connect timeout; each command must then return its own outcome, once.
 */
describe('an operator command whose first read meets a pool busy past its connect timeout (real PostgreSQL)', () => {
  let db: Database;
  let engine: Engine;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 1 });
    // No workers: nothing but the test and the commands asks the pool for its one connection.
    engine = bareEngine(db, { flows: [flow], actions: [] });
  });
  afterAll(async () => {
    await db.close();
  });

  it('a repair, a signal, a cancel and a terminate each wait, then apply once', async () => {
    if (!db.pool) throw new Error('this test needs the PostgreSQL project (a connection pool to keep busy)');
    const runs: string[] = [];
    for (let i = 0; i < 4; i++) runs.push((await engine.startFlow(flow, null)).runId);
    const [repaired, signalled, cancelled, terminated] = runs as [string, string, string, string];
    const status = (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: repaired } })).status;

    const taken = gate();
    const release = gate();
    const held = db.driver.transaction(async () => {
      taken.open();
      await release.promise;
    });
    await taken.promise;
    const settle = <T>(p: Promise<T>) =>
      p.then(
        (value) => ({ value }),
        (err: unknown) => ({ err: err instanceof Error ? err.message : String(err) }),
      );
    const outcomes = Promise.all([
      settle(
        engine.repairs.apply({
          kind: 'run.terminate',
          target: { runId: repaired },
          expected: { runStatus: status },
          actor: 'busy-pool@example.test',
          reason: 'the pool is busy',
          idempotencyKey: `busy-reads-${repaired}`,
        } as RepairCommand),
      ),
      settle(engine.signal(signalled, 'go', 'busy')),
      settle(engine.cancel(cancelled, { reason: 'busy pool' })),
      settle(engine.terminate(terminated, { reason: 'busy pool' })),
    ]);
    // Every command's first read waits for the connection.
    await waitFor('the four commands to wait for the connection', async () =>
      (db.pool?.waitingCount ?? 0) >= 4 ? true : undefined,
    );
    // The fault: the pool stays busy past its own connect timeout.
    await sleep(poolConnectTimeoutMs + 500);
    release.open();
    await held;
    const [repair, signal, cancel, terminate] = await outcomes;

    expect({
      repair: 'value' in repair ? repair.value.status : repair.err,
      signal: 'value' in signal ? typeof signal.value.signalId : signal.err,
      cancel: 'value' in cancel ? cancel.value : cancel.err,
      terminate: 'value' in terminate ? terminate.value : terminate.err,
    }).toEqual({ repair: 'applied', signal: 'string', cancel: { requested: true }, terminate: { terminated: true } });
    const count = (runId: string, type: string) => db.prisma.flowEvent.count({ where: { run_id: runId, type } });
    expect([
      await count(repaired, 'run.terminated'),
      await db.prisma.repairCommand.count({ where: { target_id: repaired } }),
      await count(signalled, 'signal.sent'),
      await count(cancelled, 'run.cancel_requested'),
      await count(terminated, 'run.terminated'),
    ]).toEqual([1, 1, 1, 1, 1]);
  }, 120_000);
});
