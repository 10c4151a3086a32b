import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInBatch } from '../../../src/api/start-in-batch.ts';
import type { Database, SqlDriver } from '../../../src/db/database.ts';
import type { RawStatement } from '../../../src/db/raw-db.ts';
import { createEngine, defineAction, defineFlow, EngineError } from '../../../src/index.ts';
import { sendsRounds } from '../../../src/runtime/run-statement-batches.ts';
import type { StartedRun } from '../../../src/store/insert-started-run.ts';
import { lonesBeforeRound, turnEnd } from '../../support/round-items.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * ADR 0063 reviewed (ADR 0069): starts now send under the transitions' limits, so a second start
 * statement goes beside the one out once two starts wait. Attacked: starts of one business key
 * submitted together (the twin must never ride in the second statement beside its first), a start
 * whose key another run already holds riding in that second statement (the server refuses the whole
 * statement; each of its starts is sent again alone), and random mixes of both against a model: per
 * flow and key exactly one run ever, the first start submitted with a free key is the one that gets
 * it, every other start of that key fails as a duplicate and writes nothing, and every start without
 * a key is written once.
 */
const startsText = '/* sagaflow: starts */';
let flowSeq = 0;

const started = (flowName: string, n: number, businessKey: string | null): StartedRun => ({
  flowName,
  flowVersion: 1,
  input: { n },
  businessKey,
  tags: [],
  expiresAt: null,
  runTimeoutAt: null,
  now: new Date(),
  lease: null,
});

/** The driver with each start statement's number of starts noted as it is sent. A fresh driver: batchers are per driver. */
function noteStarts(db: Database): { driver: SqlDriver; sizes: number[] } {
  const sizes: number[] = [];
  const statement = (s: RawStatement, limits?: Parameters<SqlDriver['statement']>[1]) => {
    if (s.text.trim().startsWith(startsText)) sizes.push((s.values[0] as unknown[]).length);
    return db.driver.statement(s, limits);
  };
  return { driver: { ...db.driver, statement }, sizes };
}

describe(`starts under the second-statement rule keep one run per business key (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const runsOf = (flowName: string) =>
    db.driver.query<{ id: string; business_key: string | null; n: number }>(
      `select id, business_key, (input->>'n')::int as n from "sagaflow"."flow_runs" where flow_name = $1`,
      [flowName],
    );
  const eventsOf = (flowName: string) =>
    db.driver.query<{ n: number }>(
      `select count(*)::int as n from "sagaflow"."flow_events" e join "sagaflow"."flow_runs" r on r.id = e.run_id
        where r.flow_name = $1`,
      [flowName],
    );

  it('a start whose key is taken, in the second statement, fails alone; the start beside it is written once', async () => {
    const flowName = `review13-taken-${++flowSeq}`;
    await startInBatch(db.driver, started(flowName, 0, 'taken'));
    const { driver, sizes } = noteStarts(db);
    // Where rounds go (PostgreSQL), two may be out while none is slow (ADR 0076): two go alone first.
    const rounds = sendsRounds(db.driver);
    const lones = rounds ? lonesBeforeRound : 1;
    // Each lone one sent before the next is submitted, so it goes by itself: one submitted while a
    // statement is out goes at the end of its turn (ADR 0083).
    const submitted: Promise<unknown>[] = [];
    for (let k = 0; k < lones; k++) {
      submitted.push(startInBatch(driver, started(flowName, 10 + k, null)));
      while (sizes.length <= k) await turnEnd();
    }
    submitted.push(
      startInBatch(driver, started(flowName, 2, 'taken')),
      startInBatch(driver, started(flowName, 3, null)),
    );
    const alone = Array<number>(lones).fill(1);
    await turnEnd();
    // At the end of their turn, where the rules let them go: the taken key rides in the second
    // statement, beside the first (ADR 0063; sent on the first's return instead, should it come back
    // first); with rounds, in the one that goes when one of those out returns.
    expect(sizes.slice(0, rounds ? lones : lones + 1)).toEqual(rounds ? alone : [...alone, 2]);
    const settled = await Promise.allSettled(submitted);
    expect(settled.map((s) => s.status)).toEqual([...alone.map(() => 'fulfilled'), 'rejected', 'fulfilled']);
    // The lone ones, the two behind them together, refused, then each of those two alone.
    expect(sizes).toEqual([...alone, 2, 1, 1]);
    const runs = await runsOf(flowName);
    expect(runs.map((r) => r.n).sort((x, y) => x - y)).toEqual([0, 3, ...alone.map((_, k) => 10 + k)]);
    // Per run `run.started` and nothing else (no lease: not written active); none for the refused one.
    expect((await eventsOf(flowName))[0]!.n).toBe(2 + lones);
  });

  it('random starts with shared and taken keys match the model', async () => {
    const keys = ['a', 'b', 'c'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(fc.constantFrom(...keys), { nil: null }), { minLength: 2, maxLength: 10 }),
        fc.subarray(keys),
        async (submitted, taken) => {
          const flowName = `review13-model-${++flowSeq}`;
          for (const key of taken) await startInBatch(db.driver, started(flowName, -1, key));
          const { driver, sizes } = noteStarts(db);
          // All submitted in one turn: the batcher forms its statements from them as a burst of callers would.
          const settled = await Promise.allSettled(
            submitted.map((key, n) => startInBatch(driver, started(flowName, n, key))),
          );

          const winners = new Map<string, number>();
          submitted.forEach((key, n) => {
            if (key !== null && !taken.includes(key) && !winners.has(key)) winners.set(key, n);
          });
          const expected = submitted.map((key, n) => key === null || winners.get(key) === n);
          expect(settled.map((s) => s.status === 'fulfilled')).toEqual(expected);
          for (const s of settled) if (s.status === 'rejected') expect(String(s.reason)).toMatch(/unique|duplicate/i);

          const runs = await runsOf(flowName);
          const written = submitted.flatMap((_, n) => (expected[n] ? [n] : []));
          expect(
            runs
              .filter((r) => r.n >= 0)
              .map((r) => r.n)
              .sort((x, y) => x - y),
          ).toEqual(written);
          expect(runs.length).toBe(written.length + taken.length);
          expect((await eventsOf(flowName))[0]!.n).toBe(runs.length);
          const ids = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value.runId] : []));
          expect(new Set(ids).size).toBe(ids.length);
          // No statement carried more starts than were submitted, and none went without one.
          expect(sizes.every((size) => size >= 1 && size <= submitted.length)).toBe(true);
        },
      ),
      { numRuns: testDbKind() === 'postgres' ? 40 : 15 },
    );
  });

  it('a burst of starts handed to a running pool (first step in the start) keeps one run per key and runs each once', async () => {
    const ran = new Map<number, number>();
    const step = defineAction({
      name: 'review13-burst-step',
      run: async (n: number) => {
        ran.set(n, (ran.get(n) ?? 0) + 1);
        return n;
      },
    });
    const flow = defineFlow({ name: 'review13-burst', version: 1, run: async (ctx, n: number) => ctx.action(step, n) });
    const engine = createEngine({
      db,
      flows: [flow],
      actions: [step],
      logger: pino({ level: 'silent' }),
      config: { worker: { concurrency: 16, poll_interval_ms: 50 } },
    });
    engine.startWorkers();
    try {
      await waitFor('the pool to claim once', async () =>
        (engine.workerCounters()?.claims ?? 0) > 0 ? true : undefined,
      );
      const keyOf = (n: number) => (n % 3 === 0 ? null : `k${n % 4}`);
      const settled = await Promise.allSettled(
        Array.from({ length: 24 }, (_, n) => engine.startFlow(flow, n, { businessKey: keyOf(n) ?? undefined })),
      );
      // Through the pool a start goes in one of two batchers (handed off with its first step, or not,
      // once the 16 slots are taken), each keeping its own twins apart, and its input is checked
      // first: which start of a key wins is not the submit order here, only that one does.
      const winners = new Map<string, number>();
      settled.forEach((s, n) => {
        const k = keyOf(n);
        if (s.status === 'fulfilled') {
          if (k !== null) {
            expect(winners.get(k), `key ${k} won twice`).toBeUndefined();
            winners.set(k, n);
          }
          return;
        }
        expect(k, `start ${n} without a key failed: ${String(s.reason)}`).not.toBeNull();
        const reason = s.reason as EngineError;
        expect(reason).toBeInstanceOf(EngineError);
        expect(reason.code).toBe('duplicate_business_key');
      });
      expect([...winners.keys()].sort()).toEqual(['k0', 'k1', 'k2', 'k3']);
      const ids = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value.runId] : []));
      await waitFor('every written run to complete', async () => {
        const runs = await db.driver.query<{ status: string }>(
          `select status from "sagaflow"."flow_runs" where id = any($1::uuid[])`,
          [ids],
        );
        return runs.length === ids.length && runs.every((r) => r.status === 'Completed') ? true : undefined;
      });
      expect([...ran.values()].every((c) => c === 1)).toBe(true);
      expect(ran.size).toBe(ids.length);
    } finally {
      await engine.stopWorkers();
    }
  });
});
