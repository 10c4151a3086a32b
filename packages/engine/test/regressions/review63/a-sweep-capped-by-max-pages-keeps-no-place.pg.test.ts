import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { copiesAhead, isExpired } from './support/held-overdue.ts';

/**
 * Review 63, attacking ADR 0135's addendum §3 ("The expiry sweep goes on where the last pass stopped …
 * whatever a pass cannot get through costs that pass only"; review 62's D2) through the engine's public
 * `sweepExpiredRuns({ pageSize, maxPages })`.
 *
 * Overdue runs held for good by one other session (an operator's `select … for update` left open) sit at the
 * head of the stalest-first order; one free overdue run is behind them. A sweep that stops on `maxPages`
 * does not keep its place: it deletes the engine's cursor (`resumeAfter.delete`) as if it had gone round.
 */
describe('review 63: a sweep stopped by maxPages (real PostgreSQL)', () => {
  let db: (Database & { url?: string }) | undefined;
  let t: TestEngine | undefined;
  let held: HeldRows | undefined;
  afterEach(async () => {
    await held?.rollback().catch(() => undefined);
    held = undefined;
    await t?.close();
    await db?.close();
    t = undefined;
    db = undefined;
  });

  async function setUp(heldCount: number, passBudgetMs = 5000) {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({
      db,
      flows: [waiter],
      actions,
      // No allowance: each held run is given up after 100 ms (monitorRunWaitFloorMs).
      config: { sweeps: { held_run_wait_ms: 0, pass_budget_ms: passBudgetMs } },
    });
    const [template, free] = await parkedWaiters(t, [600, 900]);
    const ahead = await copiesAhead(db, template!, heldCount - 1);
    held = await holdRuns(db.url!, [...ahead, template!]);
    t.clock.advance(3_600_000);
    return { free: free!, heldIds: [...ahead, template!] };
  }

  it('repeated sweeps of one page each reach the free overdue run behind a page of held runs', async () => {
    const { free } = await setUp(3);
    const sweeps = [];
    for (let i = 0; i < 3; i++) {
      const r = await t!.engine.sweepExpiredRuns({ pageSize: 3, maxPages: 1 });
      sweeps.push(r.expired.length);
    }
    const freeExpired = await isExpired(db!, free);
    expect({ freeExpired }, JSON.stringify({ expiredPerSweep: sweeps })).toEqual({ freeExpired: true });
  }, 60_000);

  it("an operator's sweepExpiredRuns({ maxPages }) between monitor passes does not send the monitor back to the stalest deadline", async () => {
    // A pass budget of 250 ms: a monitor pass gets through at most 3 held runs (100 ms each) before it stops
    // and keeps its place, so, left alone, the passes go on round the 6 held runs and reach the free one.
    const { free } = await setUp(6, 250);
    const log = [];
    for (let i = 0; i < 6 && !(await isExpired(db!, free)); i++) {
      const p = await t!.engine.monitorPass({ doctor: false });
      log.push({ monitor: p.swept ? { expired: p.runs.expired.length, more: p.runs.more } : p.reason });
      // An operator (or a host's own schedule) sweeps one small page between two monitor passes.
      const o = await t!.engine.sweepExpiredRuns({ pageSize: 1, maxPages: 1 });
      log.push({ operator: o.expired.length });
    }
    const freeExpired = await isExpired(db!, free);
    expect({ freeExpired }, JSON.stringify(log)).toEqual({ freeExpired: true });
  }, 60_000);

  it('control (held): monitor passes alone go on round the held runs and reach the free one', async () => {
    const { free } = await setUp(6, 250);
    const log = [];
    for (let i = 0; i < 6 && !(await isExpired(db!, free)); i++) {
      const p = await t!.engine.monitorPass({ doctor: false });
      log.push(p.swept ? { expired: p.runs.expired.length, more: p.runs.more } : p.reason);
    }
    expect({ freeExpired: await isExpired(db!, free) }, JSON.stringify(log)).toEqual({ freeExpired: true });
  }, 60_000);
});
