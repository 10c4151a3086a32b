import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 60 (ADR 0132's addendum: once a bulk has spent its one lock wait on busy items, "each later item
 * waits 100 ms (`bulkItemLockWaitFloorMs`): long enough for a worker's round, which holds a run's row for
 * milliseconds"). Attacked: a bulk `run.signal` whose first target another session holds (spending the
 * whole lock wait) and whose other targets are runs that workers are moving right now (a loop of quick
 * steps, eight workers). Is any of the moving runs reported `busy` at the 100 ms floor, and once the held
 * run is let go, does the same bulk sent again apply the held item exactly once?
 */
const LOOP = 400;
const tick = defineAction({ name: 'r60-tick', run: async (n: number) => n });
const loop = defineFlow({
  name: 'r60-moving',
  version: 1,
  run: async (ctx) => {
    for (let i = 0; i < LOOP; i++) await ctx.action(tick, i).run();
    return null;
  },
});

describe('review 60: a bulk past its lock wait over runs workers are moving (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let engine: Engine;
  let held: HeldRows | undefined;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 12 });
    engine = createEngine({
      db,
      flows: [waiter, loop],
      actions: [...actions, tick],
      config: {
        processes: { transaction_timeout_ms: 1_000 },
        worker: { poll_interval_ms: 10, concurrency: 8 },
        logging: { anomaly_level: null },
      },
      logger: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await engine?.stopWorkers(500).catch(() => undefined);
    await db?.close();
  });

  it('no moving run is reported busy at the floor; the held item applies once when sent again', async () => {
    engine.startWorkers();
    const { runId: heldRun } = await engine.startFlow(waiter, null);
    await waitFor('the held run to park', async () =>
      (await engine.getRun(heldRun))?.run.status === 'Waiting' ? true : undefined,
    );
    const moving: string[] = [];
    for (let i = 0; i < 6; i++) moving.push((await engine.startFlow(loop, null)).runId);
    await waitFor('every loop to be moving', async () => {
      const done = await db.prisma.actionRun.groupBy({
        by: ['run_id'],
        where: { run_id: { in: moving }, status: 'Completed' },
        _count: true,
      });
      return done.length === moving.length && done.every((d) => d._count >= 5) ? true : undefined;
    });
    held = await holdRuns(db.url!, [heldRun]);
    const targets = [heldRun, ...moving];
    const statuses = await db.prisma.flowRun.findMany({
      where: { id: { in: targets } },
      select: { id: true, status: true },
    });
    const bulk = {
      kind: 'run.signal',
      actor: 'ana',
      reason: 'the warehouse confirmed them',
      idempotencyKey: `r60-${randomUUID()}`,
      signal: { name: 'noted', payload: { ok: true } },
      items: targets.map((runId) => ({
        target: { runId },
        expected: { runStatus: statuses.find((s) => s.id === runId)!.status },
      })),
    };
    const first = await engine.repairs.applyBulk(bulk);
    const stillMoving = await db.prisma.flowRun.count({ where: { id: { in: moving }, status: 'Running' } });
    await held.rollback();
    held = undefined;

    const outcomes = first.items.map((i) => i.outcome);
    // The loops were still being moved by the workers when the bulk ended (the attack's premise).
    expect(stillMoving).toBeGreaterThan(0);
    expect(outcomes[0]).toBe('busy');
    expect(
      outcomes.slice(1).filter((o) => o === 'busy').length,
      `outcomes ${JSON.stringify(outcomes)}; ${stillMoving} of ${moving.length} loops still Running after the bulk; ` +
        `messages: ${JSON.stringify(first.items.slice(1).map((i) => i.message))}`,
    ).toBe(0);

    const again = await engine.repairs.applyBulk(bulk);
    expect(again.items[0]).toMatchObject({ outcome: 'applied', result: { replayed: false } });
    expect(await db.prisma.signal.count({ where: { run_id: heldRun } })).toBe(1);
    for (const [i, runId] of moving.entries())
      expect(await db.prisma.signal.count({ where: { run_id: runId } }), `${runId}: ${outcomes[i + 1]}`).toBe(
        outcomes[i + 1] === 'applied' ? 1 : 0,
      );
  }, 60_000);
});
