import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { Engine } from '../../../src/index.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 60 (ADR 0134 §2: "`kick`, `reclaimStep`, `signal`, `cancel` and the first transaction of `terminate`
 * run under `processes.transaction_timeout_ms` (`statement_timeout`), and wait for a held row at most half
 * of it (`lock_timeout`). Giving up is `target_busy`, naming the command and the run, with nothing
 * changed"; Consequences: "A caller of `engine.signal` (a host's HTTP handler) now gets `target_busy` (409
 * in the example service) instead of a request that hangs").
 *
 * Review 58 tested the fix at a 1 s limit. Attacked here: `engine.signal` (the example service's HTTP
 * handler's call) with the configuration out of the box (`processes.transaction_timeout_ms` 30 s, so a
 * lock wait of 15 s), on a run another session holds. `inOperatorTransaction` opens its Prisma transaction
 * with `maxWait` only, so Prisma's own interactive-transaction timeout (5 s) is shorter than the lock wait
 * the database is given: does the caller still get `target_busy` (not Prisma's P2028), with nothing
 * written? (Held: target_busy after about 15 s, no signal.)
 */
const BOUND_MS = 20_000;

async function settle(p: Promise<unknown>, ms: number): Promise<{ answer: string; ms: number }> {
  const started = Date.now();
  const answer = await Promise.race([
    p.then(
      () => 'answered',
      (e: unknown) =>
        `threw ${(e as { code?: string }).code ?? ''}: ${String((e as Error).message)
          .replace(/\s+/g, ' ')
          .slice(0, 160)}`,
    ),
    new Promise<string>((res) => setTimeout(() => res('still waiting'), ms)),
  ]);
  return { answer, ms: Date.now() - started };
}

describe('review 60: the engine commands on a held run at the default limit (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let engine: Engine;
  let held: HeldRows | undefined;
  const pending: Promise<unknown>[] = [];
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 12 });
    t = await createTestEngine({ db, flows: [waiter], actions });
    engine = t.engine;
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await Promise.allSettled(pending);
    await t?.close();
    await db?.close();
  });

  it("engine.signal of a held run answers target_busy at the default limit, past Prisma's own 5 s", async () => {
    const { runId } = await engine.startFlow(waiter, null);
    await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    await engine.stopWorkers();
    held = await holdRuns(db.url!, [runId]);

    // One command at a time: two commands waiting on one row queue on its tuple lock, and PostgreSQL's
    // lock_timeout counts each lock acquisition anew (the second can wait about twice the lock wait, still
    // within the statement limit).
    const calls = { signal: engine.signal(runId, 'go', { ok: true }) };
    for (const p of Object.values(calls)) pending.push(p.catch(() => undefined));
    const settled = Object.fromEntries(
      await Promise.all(Object.entries(calls).map(async ([name, p]) => [name, await settle(p, BOUND_MS)] as const)),
    );
    await held.rollback();
    held = undefined;
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect({ status: run.status, signals: await db.prisma.signal.count({ where: { run_id: runId } }) }).toEqual({
      status: 'Waiting',
      signals: 0,
    });
    const codes = Object.fromEntries(
      Object.entries(settled).map(([k, v]) => [k, /^threw target_busy:/.test(v.answer) ? 'target_busy' : v.answer]),
    );
    expect(codes, JSON.stringify(settled)).toEqual({ signal: 'target_busy' });
    expect(settled.signal!.ms).toBeGreaterThan(5_000);
  }, 60_000);
});
