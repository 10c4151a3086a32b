import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, defineAction, defineFlow, type Database, type Engine } from '../src/index.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

/** Each run's step waits until the test opens its gate: that is what keeps the pool's one slot taken. */
const gates = new Map<number, { opened: Promise<void>; open: () => void }>();
function gate(n: number) {
  let g = gates.get(n);
  if (!g) {
    let open = () => undefined as void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    g = { opened, open };
    gates.set(n, g);
  }
  return g;
}
const entered = new Set<number>();
const step = defineAction({
  name: 'own-notification-step',
  run: async (n: number) => {
    entered.add(n);
    await gate(n).opened;
    return n;
  },
});
const flow = defineFlow({
  name: 'own-notification',
  version: 1,
  run: async (ctx, n: number) => ctx.action(step, n),
});

/**
 * A start that finds its process's pool full queues its wake due now and nudges the pool; the wake's
 * NOTIFY then comes back to that pool's own listener, usually after the loop has claimed the job.
 * That echo must not make the pool refuse its next hand-off as if a job were waiting (ADR 0038,
 * addendum of 2026-12-01): a pool that did so ran every later start through the job table. The
 * test holds the pool's notifications and delivers the echo only once the job it announces is
 * running, the order the race produces; each step is driven by what the pool has done, not by time.
 */
describe(`a pool's own NOTIFY does not refuse its next hand-off (${testDbKind()})`, () => {
  let db: Awaited<ReturnType<typeof openTestDatabase>>;
  let engine: Engine;
  const held: (() => void)[] = [];
  beforeAll(async () => {
    db = await openTestDatabase();
    const listen = db.listen!.bind(db);
    // The same database and LISTEN; each notification waits here until the test delivers it.
    const holding: Database = {
      ...db,
      listen: (channel, onNotify) => listen(channel, (payload) => held.push(() => onNotify(payload))),
    };
    engine = createEngine({
      db: holding,
      flows: [flow],
      actions: [step],
      logger: pino({ level: 'silent' }),
      // One slot, and a poll far away: neither a poll nor the two-interval rule can claim or refuse.
      config: { worker: { concurrency: 1, poll_interval_ms: 60_000 } },
    });
  });
  afterAll(async () => {
    for (const g of gates.values()) g.open();
    await engine.stopWorkers();
    await db.close();
  });

  it('the echo of a wake the pool already claimed is heard as its own and the next start is handed off', async () => {
    const counters = () => engine.workerCounters()!;
    let third: string | null = null;
    let second: string | null = null;
    engine.events.on('run.finished', ({ runId }) => {
      // Started inside the listener, as a closed loop does: the slot the second run freed is there.
      if (runId === second && third === null)
        void engine.startFlow(flow, 3).then((r) => {
          third = r.runId;
        });
    });
    gate(0).open();
    gate(3).open();
    engine.startWorkers();
    await waitFor('the LISTEN to take hold', async () => (counters().notifications.others > 0 ? true : undefined));
    // A run first, to get past the start-up: the claim the LISTEN's nudge asks for may still be
    // pending (a start then is refused, rightly). If this run went through the queue, its echo is
    // delivered before the counting starts.
    const { runId: warmUp } = await engine.startFlow(flow, 0);
    await waitFor('the warm-up run to complete', async () =>
      (await engine.getRun(warmUp))?.run.status === 'Completed' ? true : undefined,
    );
    if (counters().jobsClaimed > 0) await waitFor('its echo', async () => (held.length > 0 ? true : undefined));
    while (held.length > 0) held.shift()!();
    const base = counters();

    const { runId: first } = await engine.startFlow(flow, 1);
    await waitFor('the first run to take the only slot', async () => (entered.has(1) ? true : undefined));
    // No slot: the second start queues its wake and nudges the pool; its NOTIFY is held.
    second = (await engine.startFlow(flow, 2)).runId;
    await waitFor('the second start to notify', async () => (held.length > 0 ? true : undefined));
    gate(1).open();
    await waitFor('the pool to claim and run the second run', async () => (entered.has(2) ? true : undefined));
    // Now the echo arrives, while the second run holds the slot.
    while (held.length > 0) held.shift()!();
    gate(2).open();
    await waitFor('the third run to complete', async () =>
      third !== null && (await engine.getRun(third))?.run.status === 'Completed' ? true : undefined,
    );
    for (const runId of [first, second]) expect((await engine.getRun(runId))?.run.status).toBe('Completed');

    const c = counters();
    const refused = c.handOffsRefused;
    expect({
      full: refused.full - base.handOffsRefused.full,
      queued: refused.queued - base.handOffsRefused.queued,
    }).toEqual({ full: 1, queued: 0 });
    // The first and the third run were handed over; only the queued second went through a claim.
    expect(c.handOffs - base.handOffs).toBe(2);
    expect(c.jobsClaimed - base.jobsClaimed).toBe(1);
    expect(c.notifications.own - base.notifications.own).toBe(1);
    // At most one claim found nothing: the one after the third run freed the slot; none per echo.
    expect(c.emptyClaims - base.emptyClaims).toBeLessThanOrEqual(1);
    expect(await db.prisma.job.count()).toBe(0);
  });
});
