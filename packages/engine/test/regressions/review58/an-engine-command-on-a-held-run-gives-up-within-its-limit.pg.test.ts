import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { Engine } from '../../../src/index.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 58 (ADR 0131, ADR 0132 §1). ADR 0132 bounded `engine.repairs.apply` with the process limits:
 * a repair on a row another session holds answers `target_busy` within `processes.transaction_timeout_ms`
 * instead of waiting for as long as the row is held (review 55). The engine's own operator commands are
 * the same commands by another door: `engine.kick`, `engine.reclaimStep` (the repair the `owner_gone`
 * stuck reason names: "reclaim it (engine.reclaimStep(...), or kick the run)"), `engine.cancel`,
 * `engine.terminate` and `engine.signal` (the example service's HTTP handler calls it). They run in
 * `inOperatorTransaction`, with no limit given to the database. The guarantee attacked is ADR 0131's
 * title: a row another session holds is given up, not waited for; and the same command answers alike
 * whichever door it comes through.
 */
const TX_MS = 1_000;
const BOUND_MS = TX_MS + 4_000;

async function within(p: Promise<unknown>, ms: number): Promise<string> {
  return Promise.race([
    p.then(
      () => 'answered',
      (e: unknown) => `threw ${(e as { code?: string }).code ?? String((e as Error).message).slice(0, 60)}`,
    ),
    new Promise<string>((res) => setTimeout(() => res('still waiting'), ms)),
  ]);
}

describe('review 58: the engine commands on a run another session holds (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let engine: Engine;
  let held: HeldRows | undefined;
  const pending: Promise<unknown>[] = [];
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 12 });
    t = await createTestEngine({
      db,
      flows: [waiter],
      actions,
      config: { processes: { transaction_timeout_ms: TX_MS } },
    });
    engine = t.engine;
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await Promise.allSettled(pending);
    await t?.close();
    await db?.close();
  });

  it('kick, reclaimStep, signal, cancel and terminate of a held run settle within the limit, as the repair does', async () => {
    const { runId } = await engine.startFlow(waiter, null);
    await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    await engine.stopWorkers();
    held = await holdRuns(db.url!, [runId]);

    // The control: the repair of the same run gives up within its limit (ADR 0132 §1).
    const repair = engine.repairs.apply({
      kind: 'run.kick',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      actor: 'ana',
      reason: 'the run is stuck',
      idempotencyKey: randomUUID(),
    });
    pending.push(repair.catch(() => undefined));

    const calls = {
      kick: engine.kick(runId),
      reclaimStep: engine.reclaimStep(runId),
      signal: engine.signal(runId, 'go', { ok: true }),
      cancel: engine.cancel(runId, { reason: 'the customer left' }),
      terminate: engine.terminate(runId, { reason: 'the customer left' }),
    };
    for (const p of Object.values(calls)) pending.push(p.catch(() => undefined));
    const settled = Object.fromEntries(
      await Promise.all([
        within(repair, BOUND_MS).then((s) => ['repair', s] as const),
        ...Object.entries(calls).map(([name, p]) => within(p, BOUND_MS).then((s) => [name, s] as const)),
      ]),
    );
    const waiting = await db.prisma.$queryRaw<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock' and ${held.pid}::int = any(pg_blocking_pids(pid))`;
    const gaveUp = (s: string) => (s === 'still waiting' ? 'still waiting' : 'settled');
    expect(
      Object.fromEntries(Object.entries(settled).map(([k, v]) => [k, gaveUp(v)])),
      `after ${BOUND_MS} ms (limit ${TX_MS} ms): ${JSON.stringify(settled)}; ${waiting[0]?.n} backend(s) still wait on the held run`,
    ).toEqual({
      repair: 'settled',
      kick: 'settled',
      reclaimStep: 'settled',
      signal: 'settled',
      cancel: 'settled',
      terminate: 'settled',
    });
    expect(settled.repair).toBe('threw target_busy');
    // Fixed (review 58 D2): each of the engine's own commands answers target_busy, as the repair does, and
    // changed nothing: the run is still Waiting with no signal and no cancel request.
    expect(settled).toEqual(Object.fromEntries(Object.keys(settled).map((k) => [k, 'threw target_busy'])));
    await held.rollback();
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect({ status: run.status, cancelRequested: run.cancel_requested_at !== null }).toEqual({
      status: 'Waiting',
      cancelRequested: false,
    });
    expect(await db.prisma.signal.count({ where: { run_id: runId } })).toBe(0);
  }, 60_000);
});
