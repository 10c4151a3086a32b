import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * ADR 0053 gave each set-based statement a second text, the lone item's columns as typed scalars
 * (NULL ones included) where the batch has arrays. A prepared statement is planned for its values
 * for its first five executions on a connection and may then switch to a generic plan, planned for
 * no values at all: a text that only works when the planner sees its values (a NULL scalar's type,
 * an `any($1)` of one, a CTE it inlines) would pass every test that runs it a few times and fail
 * once a connection has run it for a while. Here every connection plans every statement generically
 * from its first execution (`plan_cache_mode`), and the runs, lone ones (scalars) and side by side
 * ones (arrays), with outcomes recorded, a retried failure and a finish, must write each step's
 * history once and in order.
 */
let attemptsOf = new Map<number, number>();
const step = defineAction({
  name: 'review11.generic.step',
  retry: { maxAttempts: 2, backoff: { initialMs: 10, maxMs: 10, jitter: false } },
  run: async (input: { n: number; step: number; failFirst: boolean }) => {
    const key = input.n * 10 + input.step;
    const attempt = (attemptsOf.get(key) ?? 0) + 1;
    attemptsOf.set(key, attempt);
    if (input.failFirst && attempt === 1) throw new Error(`first attempt of ${key} fails`);
    return { n: input.n, step: input.step };
  },
});
const threeSteps = defineFlow({
  name: 'review11.generic.three-steps',
  version: 1,
  run: async (ctx, input: { n: number; failSecond: boolean }) => {
    await ctx.action(step, { n: input.n, step: 1, failFirst: false });
    await ctx.action(step, { n: input.n, step: 2, failFirst: input.failSecond });
    return ctx.action(step, { n: input.n, step: 3, failFirst: false });
  },
});

describe('the hot statements of both shapes under generic plans', () => {
  let db: Database;
  let engine: Engine;
  beforeAll(async () => {
    const first = await openTestDatabase();
    const { name } = (await first.driver.query<{ name: string }>('select current_database() as name'))[0]!;
    await first.driver.exec(`alter database "${name}" set plan_cache_mode = force_generic_plan`);
    await first.close();
    // Every connection of this pool is new, and takes the database's setting.
    db = await createDatabase({ kind: 'postgres', url: first.url!, poolSize: 6 });
    // The system clock: a retry's backoff comes due as it would in a deployment.
    engine = createEngine({
      db,
      flows: [threeSteps],
      actions: [step],
      config: { worker: { concurrency: 4, poll_interval_ms: 10 } },
      logger: pino({ level: 'silent' }),
    });
    engine.startWorkers();
  });
  afterAll(async () => {
    await engine?.stopWorkers();
    await db?.close();
  });

  const history = async (runId: string) =>
    (await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } })).map((e) =>
      e.sequence === null ? e.type : `${e.type}#${e.sequence}`,
    );
  const finished = (runId: string) =>
    waitFor(`run ${runId} to finish`, async () => {
      const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      return r.finished_at ? r : undefined;
    });
  const steps = (failed: boolean) => [
    'action.started#1',
    'action.completed#1',
    'action.started#2',
    ...(failed ? ['action.retry_scheduled#2', 'action.started#2'] : []),
    'action.completed#2',
    'action.started#3',
    'action.completed#3',
  ];

  it('plans generically on every connection', async () => {
    const modes = await Promise.all(
      [1, 2, 3].map(() => db.driver.transaction((tx) => tx.query<{ m: string }>('show plan_cache_mode'))),
    );
    expect(modes.flat().map((r) => Object.values(r)[0])).toEqual([
      'force_generic_plan',
      'force_generic_plan',
      'force_generic_plan',
    ]);
  });

  it('lone runs, one after another, each with a retried failure or not', async () => {
    attemptsOf = new Map();
    for (let n = 0; n < 8; n += 1) {
      const failSecond = n % 2 === 1;
      const { runId } = await engine.startFlow(threeSteps, { n, failSecond });
      expect((await finished(runId)).status).toBe('Completed');
      expect(await history(runId)).toEqual(['run.started', 'run.running', ...steps(failSecond), 'run.completed']);
    }
  });

  it('runs side by side, whose statements carry several items', async () => {
    attemptsOf = new Map();
    const started = await Promise.all(
      Array.from({ length: 12 }, (_, i) => engine.startFlow(threeSteps, { n: 100 + i, failSecond: i % 3 === 0 })),
    );
    for (const [i, { runId }] of started.entries()) {
      expect((await finished(runId)).status).toBe('Completed');
      expect(await history(runId)).toEqual(['run.started', 'run.running', ...steps(i % 3 === 0), 'run.completed']);
    }
  });
});
