import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import { createEngine, defineAction, defineFlow, type Database, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { keptLogger, outcomesRecordedTwice, silentRuns, summary, troubleConfig } from './support/liveness.ts';

/**
 * Review 53: every connection of the engine's is ended (pg_terminate_backend, as a failover or an
 * operator does) at progress points of a long rollback: each time another 10 of its 80 compensations
 * are recorded Completed. After the last cut, the saga must end Compensated within three lease
 * periods (plus slack), each compensation run and recorded once.
 */
const N = 80;
const AFTER_MS = 3 * troubleConfig.worker.lease_seconds * 1000 + 10_000;
const undone = new Map<number, number>();
const book = defineAction({ name: 'r53-cut-book', run: async (i: number) => i });
const unbook = defineAction({
  name: 'r53-cut-unbook',
  run: async (i: number) => {
    undone.set(i, (undone.get(i) ?? 0) + 1);
    return i;
  },
});
const saga = defineFlow({
  name: 'r53-cut-saga',
  version: 1,
  run: async (ctx) => {
    try {
      for (let i = 1; i <= N; i++) await ctx.action(book, i).compensateWith(unbook, (o) => o);
      throw new Error('refused at the end');
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe('review 53: a long rollback whose connections are ended at progress points (real PostgreSQL)', () => {
  let admin: Database & { url?: string };
  let db: Database;
  let engine: Engine;
  let dbName = '';
  const kept = keptLogger();
  beforeAll(async () => {
    admin = await openTestDatabase({ poolSize: 2 });
    dbName = (await admin.pool!.query<{ d: string }>('select current_database() as d')).rows[0]!.d;
    db = await createDatabase({ kind: 'postgres', url: admin.url!, poolSize: 4 });
    engine = createEngine({
      db,
      flows: [saga],
      actions: [book, unbook],
      config: troubleConfig,
      logger: pino({ level: 'warn' }, kept.stream),
    });
    engine.startWorkers();
    engine.startMonitor({ intervalMs: 200 });
  });
  afterAll(async () => {
    await engine?.stopWorkers(1000).catch(() => undefined);
    await engine?.stopMonitor().catch(() => undefined);
    await db?.close();
    await admin?.close();
  });

  it('a saga whose connections are all ended after every 10 recorded compensations ends Compensated, each compensation once', async () => {
    const { runId } = await engine.startFlow(saga, null);
    let cuts = 0;
    let cutsWhileOpen = 0;
    for (let mark = 10; mark < N; mark += 10) {
      await waitFor(
        `${mark} compensations recorded`,
        async () => {
          const n = await admin.prisma.compensationRun.count({ where: { run_id: runId, status: 'Completed' } });
          return n >= mark ? n : undefined;
        },
        AFTER_MS,
      ).catch(() => undefined);
      const r = await admin.pool!.query<{ n: number }>(
        `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
          where datname = $1 and pid <> pg_backend_pid() and backend_type = 'client backend'`,
        [dbName],
      );
      cuts += r.rows[0]!.n;
      const open = await admin.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      if (open.finished_at === null) cutsWhileOpen += 1;
    }
    const lastCutAt = Date.now();
    await waitFor(
      'the saga to finish',
      async () => (await admin.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).finished_at ?? undefined,
      AFTER_MS,
    ).catch(() => null);
    const run = await admin.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const comps = await admin.prisma.compensationRun.groupBy({
      by: ['status'],
      where: { run_id: runId },
      _count: true,
    });
    expect(
      { silent: await silentRuns(admin, [runId]), run: [run.status, run.stuck_reason, run.waiting_for], comps },
      `${Date.now() - lastCutAt} ms after the last cut; ${JSON.stringify(summary(kept.lines))}`,
    ).toMatchObject({ silent: [] });
    expect(run.status).toBe('Compensated');
    expect(undone.size).toBe(N);
    expect([...undone].filter(([, n]) => n !== 1)).toEqual([]);
    expect(await outcomesRecordedTwice(admin, [runId])).toEqual([]);
    expect({ cuts: cuts > 0, cutsWhileOpen }).toEqual({ cuts: true, cutsWhileOpen: N / 10 - 1 });
  }, 60_000);
});
