import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, defineAction, defineFlow, type Database, type Engine } from '../src/index.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

/** Each run's step waits until the test opens its gate: that is what keeps the pool's one slot taken. */
function latch() {
  let open = () => undefined as void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
const gates = [latch(), latch()];
const entered = new Set<number>();
const step = defineAction({
  name: 'listen-hold-step',
  run: async (n: number) => {
    entered.add(n);
    await gates[n]!.opened;
    return n;
  },
});
const flow = defineFlow({ name: 'listen-hold', version: 1, run: async (ctx, n: number) => ctx.action(step, n) });

/**
 * When the pool's LISTEN takes hold, what was queued while nobody listened announced itself to no
 * one, so the pool looks at the job table once more; until then a job may wait there, not one is
 * known to. A start made meanwhile is handed to the pool as any other, instead of being refused and
 * sent through the job table (three writing transactions more: ADR 0060), which the bench saw once
 * or twice a phase, each phase's pool being new (ADR 0064). The test holds the LISTEN's answer and
 * then the look it asks for, so the start comes while that look is out, on every run.
 */
describe(`a start while the pool's LISTEN takes hold is handed off (${testDbKind()})`, () => {
  let db: Awaited<ReturnType<typeof openTestDatabase>>;
  let engine: Engine;
  const listenHeld = latch();
  let holdLooks = false;
  const heldLooks: (() => void)[] = [];
  beforeAll(async () => {
    db = await openTestDatabase();
    const listen = db.listen!.bind(db);
    const statement = db.driver.statement.bind(db.driver);
    // The same database, LISTEN and statements; the LISTEN's answer, and the pool's looks at the
    // queue while `holdLooks`, wait here until the test lets them through.
    const holding: Database = {
      ...db,
      listen: async (channel, onNotify) => {
        const subscription = await listen(channel, onNotify);
        await listenHeld.opened;
        return subscription;
      },
      driver: {
        ...db.driver,
        statement: async (s, limits) => {
          if (holdLooks && s.text.includes('select exists')) {
            const held = latch();
            heldLooks.push(held.open);
            await held.opened;
          }
          return statement(s, limits);
        },
      },
    };
    // One slot, and a poll far away: neither a poll nor the two-interval rule can claim or refuse.
    const worker = { concurrency: 1, poll_interval_ms: 60_000 };
    engine = createEngine({
      db: holding,
      flows: [flow],
      actions: [step],
      logger: pino({ level: 'silent' }),
      config: { worker },
    });
  });
  afterAll(async () => {
    listenHeld.open();
    holdLooks = false;
    for (const release of heldLooks) release();
    for (const g of gates) g.open();
    await engine.stopWorkers();
    await db.close();
  });

  it('the look the LISTEN asks for refuses no start while it is out', async () => {
    const counters = () => engine.workerCounters()!;
    engine.startWorkers();
    await waitFor("the pool's first claim", async () => (counters().emptyClaims > 0 ? true : undefined));
    const { runId: first } = await engine.startFlow(flow, 0);
    await waitFor('the first run to take the only slot', async () => (entered.has(0) ? true : undefined));

    holdLooks = true;
    listenHeld.open();
    await waitFor('the LISTEN to take hold and the pool to look', async () =>
      heldLooks.length > 0 ? true : undefined,
    );
    gates[0]!.open();
    await waitFor('the first run to complete', async () =>
      (await engine.getRun(first))?.run.status === 'Completed' ? true : undefined,
    );
    // The finish can be seen committed before the pool has read its answer: wait for the slot itself.
    await waitFor('the first run to free its slot', async () => (counters().slotsTaken === 0 ? true : undefined));
    // The slot is free, and the look is still out.
    const { runId: second } = await engine.startFlow(flow, 1);
    const c = counters();
    expect(c.handOffsRefused.queued).toBe(0);
    expect(c.handOffs).toBe(2);

    holdLooks = false;
    for (const release of heldLooks.splice(0)) release();
    gates[1]!.open();
    await waitFor('the second run to complete', async () =>
      (await engine.getRun(second))?.run.status === 'Completed' ? true : undefined,
    );
    expect(counters().jobsClaimed).toBe(0);
    expect(await db.prisma.job.count()).toBe(0);
  });
});
