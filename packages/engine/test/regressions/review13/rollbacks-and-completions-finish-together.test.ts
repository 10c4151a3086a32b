import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawStatement } from '../../../src/db/raw-db.ts';
import {
  createEngine,
  defineAction,
  defineFlow,
  NonRetryableError,
  type Database,
  type Engine,
} from '../../../src/index.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate } from '../harness.ts';

type Input = { n: number; refuse: boolean };
const release = gate();
const waiting = new Set<string>();
const calls = new Map<string, number>();
const count = (what: string) => calls.set(what, (calls.get(what) ?? 0) + 1);

const reserve = defineAction({
  name: 'review13-mixed-reserve',
  run: async (i: Input) => {
    count(`reserve-${i.n}`);
    return { n: i.n };
  },
});
const unreserve = defineAction({
  name: 'review13-mixed-unreserve',
  run: async (i: Input) => {
    count(`unreserve-${i.n}`);
    waiting.add(`unreserve-${i.n}`);
    await release.promise;
    return { undone: i.n };
  },
});
const charge = defineAction({
  name: 'review13-mixed-charge',
  run: async (i: Input) => {
    count(`charge-${i.n}`);
    if (i.refuse) throw new NonRetryableError(`run ${i.n} is refused`);
    waiting.add(`charge-${i.n}`);
    await release.promise;
    return { charged: i.n };
  },
});
const flow = defineFlow({
  name: 'review13-mixed',
  version: 1,
  run: async (ctx, i: Input) => {
    try {
      await ctx.action(reserve, i).compensateWith(unreserve, () => i);
      await ctx.action(charge, i);
      return { n: i.n };
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

/**
 * ADR 0062 through the engine: runs that complete and runs that roll back reach their finish at the
 * same moment (each holds in its last action or its compensation until the test lets all go), so
 * the finishes batcher carries completions' outcomes and compensations' outcomes side by side, and
 * the statement's text is chosen by the batch. Every run must end as its kind ends, each step and
 * compensation recorded once with one event, the terminal event once and last, and every finish
 * statement must end each of its runs itself: an item whose outcome the chosen text could not record
 * would be left unfinished there and end later through the multi-statement path, which would hide
 * the defect from every other check. How many statements mixed both kinds is not asserted: how the
 * batcher groups them depends on timing (seen here: three finish statements of 1, 2 and 9 runs, the
 * 9 mixing both kinds, on both databases).
 */
describe(`completions and rollbacks finishing in one batch (${testDbKind()})`, () => {
  let db: Database;
  let engine: Engine;
  const finishes: { items: number; compensations: number; unfinished: number }[] = [];
  beforeAll(async () => {
    db = await openTestDatabase();
    const statement = db.driver.statement.bind(db.driver);
    const noting: Database = {
      ...db,
      driver: {
        ...db.driver,
        statement: async (s: RawStatement, limits) => {
          if (!s.text.includes('/* sagaflow: top-level run finishes */')) return statement(s, limits);
          // prev_table is the finish's ninth column: an array per item, or one value alone.
          const prev = s.values[8];
          const tables = Array.isArray(prev) ? prev : [prev];
          const items = Array.isArray(s.values[0]) ? (s.values[0] as unknown[]).length : 1;
          const compensations = tables.filter((t) => t === 'compensation_runs').length;
          const result = await statement(s, limits);
          // An item the statement did not finish (its outcome not recorded, its run's gate closed)
          // goes the multi-statement way after it: it would still end right, so count it here.
          const unfinished = (result.rows as { status: string | null }[]).filter((r) => r.status === null).length;
          finishes.push({ items, compensations, unfinished });
          return result;
        },
      },
    };
    engine = createEngine({
      db: noting,
      flows: [flow],
      actions: [reserve, unreserve, charge],
      logger: pino({ level: 'silent' }),
      config: { worker: { concurrency: 16, poll_interval_ms: 50 } },
    });
    engine.startWorkers();
  });
  afterAll(async () => {
    release.open();
    await engine.stopWorkers();
    await db.close();
  });

  it('every run ends once as its kind ends, each outcome recorded once', async () => {
    const inputs: Input[] = Array.from({ length: 12 }, (_, n) => ({ n, refuse: n % 2 === 1 }));
    const ids = new Map<number, string>();
    for (const i of inputs) ids.set(i.n, (await engine.startFlow(flow, i)).runId);
    await waitFor('every run to hold in its last action or its compensation', async () =>
      waiting.size === inputs.length ? true : undefined,
    );
    release.open();
    await waitFor('every run to end', async () => {
      const runs = await db.driver.query<{ status: string }>(
        `select status from "sagaflow"."flow_runs" where id = any($1::uuid[])`,
        [[...ids.values()]],
      );
      return runs.every((r) => !['Pending', 'Running', 'Waiting', 'Compensating'].includes(r.status))
        ? true
        : undefined;
    });

    const statuses = new Map<boolean, Set<string>>([
      [false, new Set()],
      [true, new Set()],
    ]);
    for (const i of inputs) {
      const runId = ids.get(i.n)!;
      const [run] = await db.driver.query<{ status: string; stuck_reason: string | null }>(
        `select status, stuck_reason from "sagaflow"."flow_runs" where id = $1`,
        [runId],
      );
      statuses.get(i.refuse)!.add(run!.status);
      expect(run!.stuck_reason).toBeNull();
      const events = await db.driver.query<{ type: string; row_id: string | null }>(
        `select type, row_id::text from "sagaflow"."flow_events" where run_id = $1 order by id`,
        [runId],
      );
      const types = events.map((e) => e.type);
      const terminal = types.filter((t) => t.startsWith('run.') && !['run.started', 'run.running'].includes(t));
      expect(terminal.length, `${i.n}: ${types.join(', ')}`).toBe(1);
      expect(types.at(-1)).toBe(terminal[0]);
      const actions = await db.driver.query<{ id: string; status: string; attempts: number }>(
        `select id::text, status, attempts from "sagaflow"."action_runs" where run_id = $1 order by sequence`,
        [runId],
      );
      const compensations = await db.driver.query<{ id: string; status: string; attempts: number }>(
        `select id::text, status, attempts from "sagaflow"."compensation_runs" where run_id = $1`,
        [runId],
      );
      expect(actions.map((a) => [a.status, a.attempts])).toEqual([
        ['Completed', 1],
        [i.refuse ? 'Errored' : 'Completed', 1],
      ]);
      expect(compensations.map((c) => [c.status, c.attempts])).toEqual(i.refuse ? [['Completed', 1]] : []);
      for (const row of [...actions, ...compensations]) {
        const outcomes = events.filter((e) => e.row_id === row.id && !e.type.endsWith('started'));
        expect(outcomes.length, `${i.n}: one outcome event for row ${row.id}: ${JSON.stringify(events)}`).toBe(1);
      }
      expect(calls.get(`reserve-${i.n}`)).toBe(1);
      expect(calls.get(`charge-${i.n}`)).toBe(1);
      expect(calls.get(`unreserve-${i.n}`)).toBe(i.refuse ? 1 : undefined);
    }
    expect(statuses.get(false)).toEqual(new Set(['Completed']));
    expect(statuses.get(true)!.size).toBe(1);
    expect(statuses.get(true)!.has('Completed')).toBe(false);
    // Nothing here races a finish: every item of every finish statement ended its run there.
    expect(finishes.map((f) => f.unfinished)).toEqual(finishes.map(() => 0));
    // Not vacuous: rollbacks' finishes did go out as finish statements carrying their compensation's outcome.
    expect(finishes.some((f) => f.compensations > 0)).toBe(true);
  });
});
