import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate, keptLogger } from '../review53/support/liveness.ts';

/**
 * Review 57 (ADR 0010 second addendum with ADR 0129). Each pool is a worker of its own, but the
 * outcomes held through a database outage are the ENGINE's (`deps.heldOutcomes`, one for all its
 * pools), and a pool's stop lets all of them go (`heldOutcomes.release()`). A pool started while the
 * last one drains holds an outcome; the draining pool's stop then drops it. The live pool never
 * writes it: its step stays Running under the live pool's id (beating, so never judged gone), the
 * run waits with no stuck reason, and a reclaim is refused. Guarantee (held-outcomes.ts, ADR 0129):
 * "while this process lives, a result it holds is not dropped".
 *
 * The outage is the real database refusing one step's completion: a test-only trigger on
 * `action_runs` raises SQLSTATE 08006 for that row until the test drops it. Driven by progress: the
 * draining run waits on a gate; the hold is observed in the log before the drain is let end.
 */
const config = {
  worker: {
    poll_interval_ms: 25,
    heartbeat_interval_ms: 30_000,
    dead_after_seconds: 60,
    outcome_retry: { max_attempts: 2, base_delay_ms: 10, max_delay_ms: 20 },
  },
  logging: { anomaly_level: null },
} as const;

describe("review 57: a live pool's held outcome and the last pool's stop (real PostgreSQL)", () => {
  let db: Database & { url?: string };
  const engines: Engine[] = [];
  const gates: (() => void)[] = [];
  afterAll(async () => {
    for (const o of gates) o();
    await db?.pool
      ?.query(`drop trigger if exists r57_refuse on "sagaflow"."action_runs"; drop function if exists r57_refuse()`)
      .catch(() => undefined);
    for (const e of engines) await e.stopWorkers(2_000).catch(() => undefined);
    await db?.close();
  });

  it("an outcome held by a live pool is written once the database answers, after the last pool's stop", async () => {
    db = await openTestDatabase({ poolSize: 8 });
    const kept = keptLogger();
    const oldGate = gate();
    const newGate = gate();
    gates.push(oldGate.open, newGate.open);
    const entries = { old: 0, new: 0 };
    const work = defineAction({
      name: 'r57-held-work',
      run: async (input: { tag: 'old' | 'new' }) => {
        entries[input.tag] += 1;
        await (input.tag === 'old' ? oldGate.opened : newGate.opened);
        return input.tag;
      },
    });
    const flow = defineFlow({
      name: 'r57-held',
      version: 1,
      run: async (ctx, input: { tag: 'old' | 'new' }) => ctx.action(work, input),
    });
    const a = createEngine({
      db,
      flows: [flow],
      actions: [work],
      config,
      logger: pino({ level: 'warn' }, kept.stream),
    });
    const b = createEngine({ db, flows: [flow], actions: [work], config, logger: pino({ level: 'silent' }) });
    engines.push(a, b);

    // A's first pool runs a step that has not finished; the host stops it and starts A's workers again.
    a.startWorkers();
    await a.startFlow(flow, { tag: 'old' });
    await waitFor('the first pool to run the old step', async () => (entries.old === 1 ? true : undefined));
    const stopping = a.stopWorkers(60_000);
    a.startWorkers();

    // The new pool runs a step whose completion the database refuses: the pool holds its outcome.
    const fresh = await a.startFlow(flow, { tag: 'new' });
    const step = await waitFor('the new pool to run the new step', async () => {
      if (entries.new !== 1) return undefined;
      return (await db.prisma.actionRun.findFirst({ where: { run_id: fresh.runId, status: 'Running' } })) ?? undefined;
    });
    await db.pool!.query(`
      create function r57_refuse() returns trigger language plpgsql as $$
      begin raise exception 'r57: the database is away' using errcode = '08006'; end $$;
      create trigger r57_refuse before update on "sagaflow"."action_runs"
        for each row when (new.status = 'Completed' and new.id = '${step.id}'::uuid) execute function r57_refuse();`);
    newGate.open();
    await waitFor('the new pool to hold the outcome in memory', async () =>
      kept.count(/keeps them in memory/) > 0 ? true : undefined,
    );

    // The old step ends: the first pool's drain is done and it stops.
    oldGate.open();
    expect(await stopping).toEqual({ drained: true });
    const droppedByTheOldStop = kept.count(/stopped holding step outcomes/);

    // The database answers again. The live pool retries what it holds at its next poll.
    await db.pool!.query(`drop trigger r57_refuse on "sagaflow"."action_runs"; drop function r57_refuse()`);
    const written = await waitFor(
      'the held outcome to be written',
      async () => {
        const s = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: step.id } });
        return s.status === 'Completed' ? 'written' : undefined;
      },
      10_000,
    ).catch(() => 'never written');
    const row = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: step.id } });
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: fresh.runId } });
    const reclaim = await b.reclaimStep(fresh.runId, { stepId: step.id }).then(
      (r) => r,
      (e: unknown) => ({ threw: (e as { code?: string }).code ?? String(e) }),
    );
    expect(
      { written, droppedByTheOldStop },
      JSON.stringify({
        step: { status: row.status, claimedBy: row.claimed_by, liveId: a.runtime.workerId },
        run: { status: run.status, stuck: run.stuck_reason, waiting: run.waiting_for },
        reclaim,
      }),
    ).toEqual({ written: 'written', droppedByTheOldStop: 0 });
  }, 90_000);
});
