import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * Review 56 (ADR 0010 second addendum). A pool started again after a stop is a new worker with an id of
 * its own. With the poll interval at its longest (60 s), a start made right after the restart must still
 * run at once (handed to the pool, not left for the next poll), under the new id. And a stop called
 * before the new pool's first beat must end promptly and leave the rows stopped.
 */
const config = {
  worker: { poll_interval_ms: 60_000, heartbeat_interval_ms: 30_000 },
  logging: { anomaly_level: null },
} as const;

describe('review 56: starts and stops right after a restart (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let engine: Engine | undefined;
  afterAll(async () => {
    await engine?.stopWorkers(5_000).catch(() => undefined);
    await db?.close();
  });

  it('a start right after a restart runs within seconds, not at the next poll, and a stop before the beat ends', async () => {
    db = await openTestDatabase({ poolSize: 6 });
    const ping = defineAction({ name: 'r56-restart-ping', run: async () => 'pong' });
    const flow = defineFlow({ name: 'r56-restart-ping', version: 1, run: async (ctx) => ctx.action(ping, null) });
    engine = createEngine({ db, flows: [flow], actions: [ping], config, logger: pino({ level: 'silent' }) });
    const workerId = engine.runtime.workerId;
    engine.startWorkers();
    await waitFor(
      'the first beat',
      async () => (await db.prisma.worker.findUnique({ where: { id: workerId } })) ?? undefined,
    );
    expect(await engine.stopWorkers(5_000)).toEqual({ drained: true });

    // Started again, and a start at once: a new worker id, and the start is handed to it.
    engine.startWorkers();
    const restartedId = engine.runtime.workerId;
    expect(restartedId).not.toBe(workerId);
    const t0 = Date.now();
    const { runId } = await engine.startFlow(flow, null);
    const done = await waitFor(
      'the run to complete',
      async () => {
        const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        return r.status === 'Completed' ? r : undefined;
      },
      30_000,
    ).then(
      () => `completed after ${Date.now() - t0} ms`,
      () => `not completed after ${Date.now() - t0} ms`,
    );
    expect(done).toMatch(/^completed/);
    expect(Date.now() - t0, done).toBeLessThan(20_000);

    // Stopped, started again and stopped before its first beat can land: the stop ends, the row says stopped.
    expect(await engine.stopWorkers(5_000)).toEqual({ drained: true });
    engine.startWorkers();
    const t1 = Date.now();
    const stopped = await engine.stopWorkers(5_000);
    expect({ stopped, withinMs: Date.now() - t1 < 10_000 }).toEqual({ stopped: { drained: true }, withinMs: true });
    expect((await db.prisma.worker.findUniqueOrThrow({ where: { id: workerId } })).stopped_at).not.toBeNull();
    expect((await db.prisma.worker.findUniqueOrThrow({ where: { id: restartedId } })).stopped_at).not.toBeNull();
    const step = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId } });
    expect(step.claimed_by, 'the restarted pool ran the step under its own id').toBe(restartedId);
  }, 90_000);
});
