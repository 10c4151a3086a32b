import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, defineAction, defineFlow, type Database, type Engine } from '../../../src/index.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate, outcomesRecordedTwice, silentRuns, troubleConfig } from './support/liveness.ts';

/**
 * Review 53: a compensation that hangs (never returns) under a live worker, with a business deadline
 * for compensations (monitor.expiration.defaults.compensation, 2 s) and the monitor running. Once the
 * deadline passes, the rollback must not stay Compensating with no reason: the run finishes (stating
 * what it left undone) or says why it does not, within a few monitor passes; the compensations that
 * ran, ran once.
 */
const DEADLINE_S = 2;
const ran = new Map<string, number>();
const hanging = gate();
const book = defineAction({ name: 'r53-hang-book', run: async (i: number) => i });
const refuse = defineAction({
  name: 'r53-hang-refuse',
  run: async () => {
    throw new Error('no seats left');
  },
});
const unbook = defineAction({
  name: 'r53-hang-unbook',
  run: async (i: number) => {
    ran.set(`unbook-${i}`, (ran.get(`unbook-${i}`) ?? 0) + 1);
    if (i === 2) {
      hanging.open();
      return new Promise<number>(() => undefined);
    }
    return i;
  },
});
const saga = defineFlow({
  name: 'r53-hang-saga',
  version: 1,
  run: async (ctx) => {
    try {
      for (let i = 1; i <= 3; i++) await ctx.action(book, i).compensateWith(unbook, (o) => o);
      await ctx.action(refuse, null);
      return 'booked';
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe(`review 53: a compensation hanging past its deadline (${testDbKind()})`, () => {
  let db: Database;
  let engine: Engine;
  beforeAll(async () => {
    db = await openTestDatabase();
    engine = createEngine({
      db,
      flows: [saga],
      actions: [book, refuse, unbook],
      config: { ...troubleConfig, monitor: { expiration: { defaults: { compensation: DEADLINE_S } } } },
      logger: pino({ level: 'silent' }),
    });
    engine.startWorkers();
  });
  afterAll(async () => {
    await engine?.stopMonitor().catch(() => undefined);
    await engine?.stopWorkers(200).catch(() => undefined);
    await db?.close();
  });

  it('a rollback whose compensation hangs past its deadline ends, or says why, within a few monitor passes', async () => {
    const { runId } = await engine.startFlow(saga, null);
    await hanging.opened;
    engine.startMonitor({ intervalMs: 200 });
    const hungAt = Date.now();
    // The deadline is a business deadline: once it passed, the run must not wait on the hung compensation.
    await waitFor(
      'the run to finish',
      async () => (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).finished_at ?? undefined,
      DEADLINE_S * 1000 + 10_000,
    ).catch(() => null);
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const comps = await db.prisma.compensationRun.findMany({
      where: { run_id: runId },
      orderBy: { ordinal: 'asc' },
      select: { name: true, status: true, attempts: true, expires_at: true },
    });
    expect(
      { silent: await silentRuns(db, [runId]), run: [run.status, run.stuck_reason, run.waiting_for], comps },
      `${Date.now() - hungAt} ms after the compensation hung`,
    ).toMatchObject({ silent: [] });
    expect({ status: run.status, finished: run.finished_at !== null, error: run.error }).toMatchObject({
      status: 'Failed',
      finished: true,
    });
    expect(comps.map((c) => c.status)).not.toContain('Running');
    expect(ran.get('unbook-3')).toBe(1);
    expect(ran.get('unbook-2')).toBe(1);
    expect(await outcomesRecordedTwice(db, [runId])).toEqual([]);
  }, 40_000);
});
