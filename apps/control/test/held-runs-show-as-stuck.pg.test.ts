import { createDatabase, defineFlow, type Database } from '@sagaflow/engine';
import { createTestEngine, TestClock, type TestEngine } from '@sagaflow/engine/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { parsePrometheus, seriesOf } from './support/parse-prometheus.ts';
import { signedInClient, testDatabaseUrl } from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

/**
 * ADR 0138. A run another session holds for good (a psql left in a transaction) cannot carry a stuck reason:
 * nothing can write its row. The monitor journals it `run_held` (ADR 0137), but before this the stuck list,
 * the overview's counts and `/metrics` did not show it: on-call, who looks there, never saw it. Now a run
 * journaled `run_held` lately and still open is stuck of the kind `run_held` everywhere, counted once
 * (not also under the reason its row carried before), with what to do; once let go and expired it is gone.
 */

const waiter = defineFlow({
  name: 'held.waiter',
  version: 1,
  run: async (ctx) => ctx.awaitSignal<null>('go', { timeoutSeconds: 3600 }),
});
const token = 'scrape-token-for-held-runs-0123456789';

describe('a run the monitor found held shows as stuck run_held (PostgreSQL)', () => {
  let url: string;
  let db: Database;
  let holder: Database;
  let t: TestEngine;
  let plane: ControlPlane | undefined;
  let release: (() => void) | undefined;
  let holding: Promise<unknown> | undefined;

  beforeAll(async () => {
    url = await testDatabaseUrl('held_runs');
    db = await createDatabase({ kind: 'postgres', url, poolSize: 4 });
    holder = await createDatabase({ kind: 'postgres', url, poolSize: 1 });
    t = await createTestEngine({
      db,
      clock: new TestClock(new Date()),
      flows: [waiter],
      actions: [],
      config: { sweeps: { held_run_wait_ms: 200 } },
    });
  });
  afterAll(async () => {
    release?.();
    await holding?.catch(() => undefined);
    await plane?.stop();
    await t?.close();
    await holder?.close();
    await db?.close();
  });

  async function scrapeStuck(): Promise<Record<string, number>> {
    const res = await fetch(`${plane!.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    return seriesOf(parsePrometheus(await res.text()), 'sagaflow_stuck_runs');
  }

  it('listed, counted and explained while held; gone once let go and expired', async () => {
    // Three parked runs past their deadline. Two will be held: one with no stuck reason (the usual case), one
    // carrying a reason written before it was held. The third is free.
    const ids: string[] = [];
    for (const expiresInSeconds of [60, 70, 90]) {
      const { runId } = await t.engine.startFlow(waiter, null, { expiresInSeconds });
      await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
      ids.push(runId);
    }
    const [heldId, plainId, freeId] = ids as [string, string, string];
    await t.engine.stopWorkers();
    await db.prisma.flowRun.update({
      where: { id: heldId },
      data: { stuck_reason: 'unknown_flow: written before the hold' },
    });
    t.clock.advance(300_000);

    // Another session holds the run's row for good, as a psql left in a transaction does.
    let holds!: () => void;
    const held = new Promise<void>((resolve) => (holds = resolve));
    const letGo = new Promise<void>((resolve) => (release = resolve));
    holding = holder.prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`select id from sagaflow.flow_runs where id = any(${[heldId, plainId]}::uuid[]) for update`;
        holds();
        await letGo;
      },
      { timeout: 120_000, maxWait: 10_000 },
    );
    await held;

    // The monitor's expiry finds it held at each sweep for a minute of its clock: journaled run_held.
    const expired = [(await t.engine.sweepExpiredRuns()).expired];
    t.clock.advance(30_000);
    expired.push((await t.engine.sweepExpiredRuns()).expired);
    t.clock.advance(31_000);
    expired.push((await t.engine.sweepExpiredRuns()).expired);
    expect(expired).toEqual([[freeId], [], []]);
    expect(await db.prisma.anomalyLog.count({ where: { run_id: { in: [heldId, plainId] }, code: 'run_held' } })).toBe(
      2,
    );

    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent', SAGAFLOW_METRICS_TOKEN: token }),
    );
    const viewer = await signedInClient(plane, 'viewer');

    const overview = await viewer.overview.get.query();
    const stuckList = await viewer.runs.page.query({ stuckOnly: true });
    const heldList = await viewer.runs.page.query({ stuckReason: 'run_held' });
    const priorKind = await viewer.runs.page.query({ stuckReason: 'unknown_flow' });
    const page = await viewer.runs.get.query({ id: heldId });
    const plainPage = await viewer.runs.get.query({ id: plainId });
    const listed = stuckList.items.find((r) => r.id === heldId);
    const sorted = (rows: { id: string }[]) => rows.map((r) => r.id).sort();
    expect({
      stuck: overview.stuck,
      stuckList: sorted(stuckList.items),
      heldList: sorted(heldList.items),
      priorKind: priorKind.items.map((r) => r.id),
      listedKind: listed?.stuckReason?.split(':')[0],
      listedSaysWhatToDo: listed?.stuckReason?.includes("pg_stat_activity, state 'idle in transaction'"),
      listedKeepsPriorReason: listed?.stuckReason?.endsWith(
        'Its stuck reason before: unknown_flow: written before the hold',
      ),
      pageReason: page.run.stuckReason,
      safeRepairs: page.run.safeRepairs,
      plainReason: plainPage.run.stuckReason?.split(':')[0],
      plainSafeRepairs: plainPage.run.safeRepairs,
      metrics: await scrapeStuck(),
    }).toEqual({
      stuck: { total: 2, byReason: { run_held: 2 } },
      stuckList: [heldId, plainId].sort(),
      heldList: [heldId, plainId].sort(),
      priorKind: [],
      listedKind: 'run_held',
      listedSaysWhatToDo: true,
      listedKeepsPriorReason: true,
      pageReason: listed?.stuckReason,
      safeRepairs: ['run.kick', 'run.terminate'],
      plainReason: 'run_held',
      plainSafeRepairs: ['run.kick', 'run.terminate'],
      metrics: { 'reason=run_held': 2 },
    });
    expect(listed?.stuckReason).toContain("the monitor's expiry");

    // Let go: the next sweep expires it, and it is no longer stuck anywhere.
    release!();
    await holding;
    expect((await t.engine.sweepExpiredRuns()).expired.sort()).toEqual([heldId, plainId].sort());
    const after = await viewer.overview.get.query();
    const stuckAfter = await viewer.runs.page.query({ stuckOnly: true });
    expect({
      stuck: after.stuck,
      stuckList: stuckAfter.items.map((r) => r.id),
      metrics: await scrapeStuck(),
    }).toEqual({ stuck: { total: 0, byReason: {} }, stuckList: [], metrics: {} });
  }, 90_000);
});
