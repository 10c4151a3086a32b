import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFlow, type StartFlowOptions } from '../src/api/start-flow.ts';
import type { Database } from '../src/db/database.ts';
import type { RawStatement } from '../src/db/raw-db.ts';
import { defineFlow, type Engine } from '../src/index.ts';
import { bareEngine } from './regressions/harness.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';

/**
 * ADR 0047: the starts that arrive together go in one set-based statement, and each run is written
 * exactly as a lone start writes it; a statement that fails is sent again start by start.
 */
const flow = defineFlow({ name: 'batched-start', version: 2, run: async () => null });
const startsText = '/* sagaflow: starts */';
const many = 32;

/** The n-th start's options and hand-off: tags, business keys, run timeouts and leases mixed. */
const variant = (n: number): { opts: StartFlowOptions; lease: boolean } => ({
  opts: {
    tags: [`t${n}`, 'shared'],
    ...(n % 3 === 0 ? { businessKey: `key-${n}` } : {}),
    ...(n % 2 === 0 ? { runTimeoutSeconds: 60 + n } : {}),
    ...(n % 5 === 0 ? { expiresInSeconds: 600 } : {}),
  },
  lease: n % 4 < 2,
});

/**
 * The database with every start statement's items recorded: the values of each, in order, a column
 * per value (a lone start's scalars, ADR 0053, recorded as the batch's arrays of one).
 */
function recordStarts(db: Database): { db: Database; starts: unknown[][][] } {
  const starts: unknown[][][] = [];
  const statement = (s: RawStatement, limits?: Parameters<Database['driver']['statement']>[1]) => {
    if (s.text.trim().startsWith(startsText))
      starts.push(s.values.map((v): unknown[] => (Array.isArray(v) ? (v as unknown[]) : [v])));
    return db.driver.statement(s, limits);
  };
  return { db: { ...db, driver: { ...db.driver, statement } }, starts };
}

/** What a start wrote, with its ids (drawn by the server or a sequence) left out. */
async function written(db: Database, runId: string) {
  const [run] = await db.prisma.$queryRaw<Record<string, unknown>[]>`
    select * from "sagaflow"."flow_runs" where id = ${runId}::uuid`;
  const events = await db.prisma.$queryRaw`
    select type, sequence, row_id, data from "sagaflow"."flow_events" where run_id = ${runId}::uuid order by id`;
  const jobs = await db.prisma.$queryRaw`
    select kind, row_id, available_at, locked_by, locked_until, deliveries, payload
      from "sagaflow"."jobs" where run_id = ${runId}::uuid order by id`;
  const { id: _id, ...rest } = run!;
  return { run: rest, events, jobs };
}

describe(`starts that arrive together share one statement (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const clear = () =>
    db.prisma.$executeRaw`
      with j as (delete from "sagaflow"."jobs"), e as (delete from "sagaflow"."flow_events")
      delete from "sagaflow"."flow_runs"`;
  const startAll = (e: Engine, driver: boolean, ns: number[]) =>
    Promise.all(
      ns.map((n) => {
        const { opts, lease } = variant(n);
        const deps = driver ? e.runtime : { ...e.runtime, driver: undefined };
        return startFlow(deps, flow.name, { n }, opts, lease);
      }),
    );
  const ids = (start: Awaited<ReturnType<typeof startFlow>>) => ({
    job: start.job && { ...start.job, id: typeof start.job.id, run_id: typeof start.job.run_id },
    loaded: start.loaded && { ...start.loaded, run: { ...start.loaded.run, id: typeof start.loaded.run.id } },
  });

  it(`${many} concurrent starts: some statement carries several, and each run is written as a lone start writes it`, async () => {
    const recorded = recordStarts(db);
    const e = bareEngine(recorded.db, { flows: [flow], actions: [] });
    const ns = Array.from({ length: many }, (_, n) => n);

    // Each start alone, through the statement a start in a host's transaction still sends (Prisma).
    const alone = [];
    for (const n of ns) {
      const [start] = await startAll(e, false, [n]);
      alone.push({ result: ids(start!), rows: await written(db, start!.runId) });
    }
    await clear();

    const together = await startAll(e, true, ns);
    const sizes = recorded.starts.map((values) => values[0]!.length);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(many);
    expect(Math.max(...sizes), `items per start statement: ${sizes.join(', ')}`).toBeGreaterThan(1);
    expect(new Set(together.map((s) => s.runId)).size).toBe(many);
    for (const [n, start] of together.entries()) {
      expect({ result: ids(start), rows: await written(db, start.runId) }, `start ${n}`).toStrictEqual(alone[n]);
      if (start.loaded) expect(start.loaded.run.id).toBe(start.runId);
      if (start.job) expect(start.job.run_id).toBe(start.runId);
    }
    expect(together.filter((s) => s.loaded).length).toBe(ns.filter((n) => variant(n).lease).length);
  });

  it("a duplicate business key in a batch: that start gets a lone start's error, the others are written", async () => {
    await clear();
    const recorded = recordStarts(db);
    const e = bareEngine(recorded.db, { flows: [flow], actions: [] });
    await e.startFlow(flow, { n: 'first' }, { businessKey: 'taken' });
    recorded.starts.length = 0;

    // 'taken' is held by a committed run; 'twice' is asked for by two of the concurrent starts.
    const keys = Array.from({ length: many }, (_, n) => (n === 5 ? 'taken' : n === 9 || n === 20 ? 'twice' : `k-${n}`));
    const outcomes = await Promise.allSettled(keys.map((businessKey, n) => e.startFlow(flow, { n }, { businessKey })));

    const rejected = (key: string): unknown[] =>
      outcomes.flatMap((o, n) => (keys[n] === key && o.status === 'rejected' ? [o.reason as unknown] : []));
    const expected = (key: string) => ({
      code: 'duplicate_business_key',
      message: `a run of "batched-start" with business key "${key}" already exists`,
    });
    expect(rejected('taken')).toMatchObject([expected('taken')]);
    expect(rejected('twice')).toMatchObject([expected('twice')]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(many - 2);

    // The key already held failed a statement that carried other starts; each was then sent alone.
    const carrying = (key: string) => recorded.starts.filter((values) => values.some((v) => v.includes(key)));
    expect(carrying('taken').map((values) => values[0]!.length)).toEqual([expect.any(Number), 1]);
    expect(carrying('taken')[0]![0]!.length).toBeGreaterThan(1);
    // The two starts of one key never shared a statement.
    for (const values of recorded.starts)
      expect(values.flat().filter((v) => v === 'twice')).not.toEqual(['twice', 'twice']);

    const runs = await db.prisma.flowRun.findMany({ where: { flow_name: flow.name } });
    expect(runs.map((r) => r.business_key).sort()).toEqual([...new Set(keys)].sort());
    const counts = await db.prisma.$queryRaw<{ events: bigint; jobs: bigint }[]>`
      select (select count(*) from "sagaflow"."flow_events") as events, (select count(*) from "sagaflow"."jobs") as jobs`;
    expect(counts).toEqual([{ events: BigInt(runs.length), jobs: BigInt(runs.length) }]);
  });
});
