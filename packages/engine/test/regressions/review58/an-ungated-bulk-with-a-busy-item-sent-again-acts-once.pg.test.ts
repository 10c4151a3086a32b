import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 58 (ADR 0132 §1, §4: "An ungated bulk just reports busy items: its caller sends them again").
 * A bulk `run.signal` over two waiting runs, the second held by another session. Attacked: does the busy
 * item leave anything behind (an audit row, a signal, a history event), and does sending the same bulk
 * again (same key) act on the busy item once and replay the applied one without a second signal?
 */
const TX_MS = 1_000;

describe('review 58: an ungated bulk with a busy item, sent again (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({
      db,
      flows: [waiter],
      actions,
      config: { processes: { transaction_timeout_ms: TX_MS } },
    });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await t?.close();
    await db?.close();
  });

  it('the busy item leaves nothing, and the same bulk sent again signals each run exactly once', async () => {
    const { engine } = t;
    const runs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { runId } = await engine.startFlow(waiter, null);
      await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
      runs.push(runId);
    }
    await engine.stopWorkers();
    const [free, busy] = runs as [string, string];
    held = await holdRuns(db.url!, [busy]);
    const bulk = {
      kind: 'run.signal',
      actor: 'ana',
      reason: 'the warehouse confirmed both',
      idempotencyKey: `r58-${randomUUID()}`,
      signal: { name: 'go', payload: { ok: true } },
      items: runs.map((runId) => ({ target: { runId }, expected: { runStatus: 'Waiting' } })),
    };
    const first = await engine.repairs.applyBulk(bulk);
    const busyLeft = {
      audit: await db.prisma.repairCommand.count({ where: { target_id: busy } }),
      signals: await db.prisma.signal.count({ where: { run_id: busy } }),
      events: await db.prisma.flowEvent.count({ where: { run_id: busy, type: 'repair.applied' } }),
    };
    await held.rollback();
    held = undefined;

    expect(first.items.map((i) => ({ id: i.target.id, outcome: i.outcome, audited: i.repairId !== null }))).toEqual([
      { id: free, outcome: 'applied', audited: true },
      { id: busy, outcome: 'busy', audited: false },
    ]);
    expect(first.items[1]?.message).toMatch(/another session held a row it needed.*nothing changed/);
    expect(busyLeft).toEqual({ audit: 0, signals: 0, events: 0 });

    const again = await engine.repairs.applyBulk(bulk);
    expect(again.items.map((i) => ({ outcome: i.outcome, replayed: i.result?.replayed }))).toEqual([
      { outcome: 'applied', replayed: true },
      { outcome: 'applied', replayed: false },
    ]);
    expect(again.items[0]?.repairId).toBe(first.items[0]?.repairId);
    for (const runId of runs) {
      expect(await db.prisma.signal.count({ where: { run_id: runId } }), runId).toBe(1);
      expect(await db.prisma.repairCommand.count({ where: { target_id: runId } }), runId).toBe(1);
    }
  }, 60_000);
});
