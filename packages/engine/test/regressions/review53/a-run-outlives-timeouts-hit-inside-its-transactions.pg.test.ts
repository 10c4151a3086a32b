import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import { createEngine, defineAction, defineFlow, type Database, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate, keptLogger, outcomesRecordedTwice, silentRuns, summary, troubleConfig } from './support/liveness.ts';

/**
 * Review 53: timeouts set on the database (ALTER DATABASE ... SET, as an operator or a managed
 * PostgreSQL's defaults do) hit inside the engine's own statements: the test holds the run's row
 * lock (FOR UPDATE) for three lease periods while a step finishes, so the engine's writes to the run
 * wait on it and are cancelled by `lock_timeout` or `statement_timeout`. Once the lock is given back,
 * the run must finish within three lease periods (plus slack), its step run once, no outcome
 * recorded twice.
 */
const LEASE_MS = troubleConfig.worker.lease_seconds * 1000;
const AFTER_RELEASE_MS = 3 * LEASE_MS + 6_000;

let inStep = gate();
let stepGate = gate();
const ran: number[] = [];
const first = defineAction({ name: 'r53-timeout-first', run: async (n: number) => n + 1 });
const slow = defineAction({
  name: 'r53-timeout-slow',
  run: async (n: number) => {
    ran.push(n);
    inStep.open();
    await stepGate.opened;
    return n + 1;
  },
});
const last = defineAction({ name: 'r53-timeout-last', run: async (n: number) => n + 1 });
const flow = defineFlow({
  name: 'r53-timeout',
  version: 1,
  run: async (ctx, n: number) => ctx.action(last, await ctx.action(slow, await ctx.action(first, n))),
});

describe.each(['lock_timeout', 'statement_timeout'])(
  'review 53: %s hit inside the engine while the run row is locked (real PostgreSQL)',
  (setting) => {
    let admin: Database & { url?: string };
    let db: Database;
    let engine: Engine;
    let dbName = '';
    const kept = keptLogger();
    beforeAll(async () => {
      admin = await openTestDatabase({ poolSize: 2 });
      dbName = (await admin.pool!.query<{ d: string }>('select current_database() as d')).rows[0]!.d;
      await admin.pool!.query(`alter database "${dbName}" set ${setting} = '150ms'`);
      // The engine's connections are opened after the setting: each carries it.
      db = await createDatabase({ kind: 'postgres', url: admin.url!, poolSize: 4 });
      engine = createEngine({
        db,
        flows: [flow],
        actions: [first, slow, last],
        config: troubleConfig,
        logger: pino({ level: 'warn' }, kept.stream),
      });
      engine.startWorkers();
      engine.startMonitor({ intervalMs: 200 });
    });
    afterAll(async () => {
      stepGate.open();
      await engine?.stopWorkers(1000).catch(() => undefined);
      await engine?.stopMonitor().catch(() => undefined);
      await db?.close();
      await admin?.pool?.query(`alter database "${dbName}" reset ${setting}`).catch(() => undefined);
      await admin?.close();
    });

    it(`a run whose writes hit ${setting} on its locked row for three leases finishes once the lock is gone, its step run once`, async () => {
      ran.length = 0;
      inStep = gate();
      stepGate = gate();
      const { runId } = await engine.startFlow(flow, 1);
      await inStep.opened;
      // The trouble: the run's row is locked from the test (its own session, no timeout of its own matters).
      const locker: pg.PoolClient = await admin.pool!.connect();
      await locker.query('begin');
      await locker.query(`set local statement_timeout = 0`);
      await locker.query('select id from "sagaflow"."flow_runs" where id = $1 for update', [runId]);
      const before = kept.lines.length;
      stepGate.open();
      await new Promise((r) => setTimeout(r, 3 * LEASE_MS));
      await locker.query('rollback');
      locker.release();
      const hit = kept.lines.slice(before).filter((l) => /timeout|lock/i.test(l.err?.message ?? '')).length;
      const releasedAt = Date.now();
      await waitFor(
        'the run to finish',
        async () => (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).finished_at ?? undefined,
        AFTER_RELEASE_MS,
      ).catch(() => null);
      const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      const steps = await db.prisma.actionRun.findMany({
        where: { run_id: runId },
        orderBy: { sequence: 'asc' },
        select: { name: true, status: true, attempts: true },
      });
      expect(
        { silent: await silentRuns(db, [runId]), run: [run.status, run.stuck_reason, run.waiting_for], steps },
        `${Date.now() - releasedAt} ms after the lock was given back; ${JSON.stringify(summary(kept.lines.slice(before)))}`,
      ).toMatchObject({ silent: [] });
      expect(run.status).toBe('Completed');
      expect(run.output).toBe(4);
      expect(ran).toEqual([2]);
      expect(await outcomesRecordedTwice(db, [runId])).toEqual([]);
      // The trouble happened: the engine's statements were cancelled by the setting.
      expect(hit, JSON.stringify(summary(kept.lines.slice(before)))).toBeGreaterThan(0);
    }, 40_000);
  },
);
