import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, defineFlow, type Engine } from '../../../src/index.ts';
import { gatedAction } from '../../support/gated-action.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * Review 56 (ADR 0010 second addendum). A pool started again after its engine's earlier pool
 * recorded its stop claims nothing until its first beat clears `stopped_at`. The engine knows that
 * from a flag the earlier pool sets once its stop is written. But `stopWorkers()` detaches the pool at
 * once and writes the stop only after the drain, and `startWorkers()` may be called meanwhile (a
 * host's pause and resume, a SIGTERM handler racing a restart): the new pool is then "registered" at
 * once (nothing recorded a stop yet), beats, and takes work; the draining pool then writes
 * `stopped_at` over the live pool's row. A stopped worker is judged gone at once, so until the live
 * pool's next beat (`heartbeat_interval_ms`, 5 s by default) another replica's reclaim takes the step
 * it is running, and the step runs twice. Guarantee (seed 000, ADR 0010): a step whose worker is
 * alive and running it is not reclaimed, and with reclaim off the engine never re-executes a step on
 * its own initiative.
 *
 * Driven by progress: the old pool's step waits on a gate, so its drain ends when the test says; the
 * new pool's step waits on another gate; the stop's write is observed in the row before the reclaim.
 * The heartbeat interval is long (30 s) so the window the test looks into is not closed by a beat.
 */
const config = {
  worker: { poll_interval_ms: 25, heartbeat_interval_ms: 30_000, dead_after_seconds: 60 },
  logging: { anomaly_level: null },
} as const;

describe('review 56: a pool started while the previous one still drains (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  const engines: Engine[] = [];
  let openAll = () => undefined as void;
  afterAll(async () => {
    openAll();
    for (const e of engines) await e.stopWorkers(5_000).catch(() => undefined);
    await db?.close();
  });

  it("a step the new pool runs is not reclaimed when the draining pool's stop is written after it started", async () => {
    db = await openTestDatabase({ poolSize: 8 });
    const gated = gatedAction('r56-drain-work');
    const { action: work, entries, gate } = gated;
    openAll = gated.openAll;
    const flow = defineFlow({
      name: 'r56-drain',
      version: 1,
      run: async (ctx, input: { tag: string }) => ctx.action(work, input),
    });
    const make = () => {
      const e = createEngine({ db, flows: [flow], actions: [work], config, logger: pino({ level: 'silent' }) });
      engines.push(e);
      return e;
    };
    const a = make();
    const b = make();
    const workerId = a.runtime.workerId;
    const openOld = gate('old');
    const openNew = gate('new');

    // A's first pool runs a step that has not finished.
    a.startWorkers();
    const old = await a.startFlow(flow, { tag: 'old' });
    await waitFor("A's first pool to run the old step", async () => ((entries.get('old') ?? 0) > 0 ? true : undefined));

    // The host stops A's workers (the drain waits for the old step) and starts them again meanwhile.
    const stopping = a.stopWorkers(30_000);
    a.startWorkers();
    await waitFor("A's new pool to beat", async () => {
      const w = await db.prisma.worker.findUnique({ where: { id: workerId } });
      return w && w.stopped_at === null ? w : undefined;
    });
    const fresh = await a.startFlow(flow, { tag: 'new' });
    const step = await waitFor("A's new pool to run the new step", async () => {
      const s = await db.prisma.actionRun.findFirst({ where: { run_id: fresh.runId } });
      return s?.status === 'Running' && (entries.get('new') ?? 0) === 1 ? s : undefined;
    });

    // The old step ends; the first pool's drain is done and it records its stop.
    openOld();
    expect(await stopping).toEqual({ drained: true });
    const row = await db.prisma.worker.findUniqueOrThrow({ where: { id: workerId } });

    // Another replica is asked to reclaim the step A's live pool is running.
    const reclaim = await b.reclaimStep(fresh.runId, { stepId: step.id });
    let second = 'not reclaimed';
    if (reclaim.reclaimed) {
      b.startWorkers();
      second = await waitFor('B to run the step a second time', async () =>
        (entries.get('new') ?? 0) >= 2 ? 'B ran it a second time while A still ran it' : undefined,
      ).catch(() => 'B did not run it again');
    }
    expect(
      { reclaim, second, entriesOfTheNewStep: entries.get('new') },
      `A's live pool runs step ${step.id}; its worker row says stopped_at ${row.stopped_at?.toISOString() ?? 'null'} ` +
        `(written by the pool that drained after the new one started; old run ${old.runId})`,
    ).toMatchObject({ reclaim: { reclaimed: false }, second: 'not reclaimed', entriesOfTheNewStep: 1 });
    openNew();
  }, 90_000);
});
