import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, defineFlow, type Engine } from '../../../src/index.ts';
import { gatedAction } from '../../support/gated-action.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * Review 57 (ADR 0010 second addendum: "each pool keeps the id it started with for its whole life
 * (its claims, acknowledgements, beats and the stop it records)"). The pool captures its id, but the
 * replays it runs get the engine's shared deps, whose `workerId` `startWorkers()` replaces. A run the
 * old pool is still draining claims its NEXT step under the new pool's id. When that new pool is
 * stopped (cleanly, nothing in flight) its stop marks the id stopped: the step the draining pool is
 * running is then judged gone at once, another replica's reclaim takes it, and it runs twice while
 * the old pool (alive, beating, not stopped) still runs it. Guarantee (seed 000, ADR 0010): a step
 * whose worker is alive and running it is not reclaimed.
 *
 * Driven by progress: each step waits on a gate; the stop of the second pool is observed in its row.
 */
const config = {
  worker: { poll_interval_ms: 25, heartbeat_interval_ms: 30_000, dead_after_seconds: 60 },
  logging: { anomaly_level: null },
} as const;

describe('review 57: a draining pool claims its next step under its own id (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  const engines: Engine[] = [];
  let openAll = () => undefined as void;
  afterAll(async () => {
    openAll();
    for (const e of engines) await e.stopWorkers(5_000).catch(() => undefined);
    await db?.close();
  });

  it('a step claimed by a draining pool after a restart is not reclaimed while that pool runs it', async () => {
    db = await openTestDatabase({ poolSize: 8 });
    const gated = gatedAction('r57-drain-work');
    const { action: work, entries, gate } = gated;
    openAll = gated.openAll;
    const flow = defineFlow({
      name: 'r57-drain',
      version: 1,
      run: async (ctx) => {
        await ctx.action(work, { tag: 'one' });
        return ctx.action(work, { tag: 'two' });
      },
    });
    const make = () => {
      const e = createEngine({ db, flows: [flow], actions: [work], config, logger: pino({ level: 'silent' }) });
      engines.push(e);
      return e;
    };
    const a = make();
    const b = make();
    const firstId = a.runtime.workerId;
    const openOne = gate('one');
    const openTwo = gate('two');

    a.startWorkers();
    const run = await a.startFlow(flow, {});
    await waitFor("A's first pool to run step one", async () => ((entries.get('one') ?? 0) > 0 ? true : undefined));

    // The host stops A's workers (the drain waits for the run) and starts them again meanwhile.
    const stopping = a.stopWorkers(60_000);
    a.startWorkers();
    const secondId = a.runtime.workerId;
    expect(secondId).not.toBe(firstId);

    // Step one ends: the FIRST pool's replay goes on and claims step two.
    openOne();
    const two = await waitFor('the draining pool to run step two', async () => {
      if ((entries.get('two') ?? 0) !== 1) return undefined;
      return (await db.prisma.actionRun.findFirst({ where: { run_id: run.runId, status: 'Running' } })) ?? undefined;
    });

    // The second pool (nothing in flight) is stopped cleanly: its stop is recorded.
    expect(await a.stopWorkers(5_000)).toEqual({ drained: true });
    await waitFor("the second pool's stop to be recorded", async () => {
      const w = await db.prisma.worker.findUnique({ where: { id: secondId } });
      return w?.stopped_at ? w : undefined;
    });
    const firstRow = await db.prisma.worker.findUnique({ where: { id: firstId } });

    // Another replica is asked to reclaim step two, which the first pool (not stopped) still runs.
    const reclaim = await b.reclaimStep(run.runId, { stepId: two.id });
    let second = 'not reclaimed';
    if (reclaim.reclaimed) {
      b.startWorkers();
      second = await waitFor('B to run step two a second time', async () =>
        (entries.get('two') ?? 0) >= 2 ? 'B ran step two a second time while the draining pool ran it' : undefined,
      ).catch(() => 'B did not run it again');
    }
    expect(
      { claimedBy: two.claimed_by, reclaim, second, entriesOfStepTwo: entries.get('two') },
      `first pool ${firstId} (stopped_at ${firstRow?.stopped_at?.toISOString() ?? 'null'}) runs step two; ` +
        `second pool ${secondId} was stopped`,
    ).toMatchObject({
      claimedBy: firstId,
      reclaim: { reclaimed: false },
      second: 'not reclaimed',
      entriesOfStepTwo: 1,
    });
    openTwo();
    expect(await stopping).toEqual({ drained: true });
  }, 90_000);
});
