import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { defineAction } from '../../../src/definitions/define-action.ts';
import { defineFlow } from '../../../src/definitions/define-flow.ts';
import { createTestEngine } from '../../../src/testing/create-test-engine.ts';
import { countStatements } from '../../support/count-statements.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * Review 49 (1) and (4). Durable-execution engines are hurt by runs that grow: does each step (or each
 * wake) of a run cost more the longer the run already is? Measured structurally, not by time: the
 * statements the engine sends per step (its driver, counted) and the rows PostgreSQL read from the
 * engine's tables per step (pg_stat_user_tables: seq_tup_read + idx_tup_fetch), at a short and a long run.
 */
const tick = defineAction({ name: 'r49.tick', run: (i: { i: number }) => Promise.resolve({ i: i.i }) });
const loop = defineFlow({
  name: 'r49.loop',
  version: 1,
  run: async (ctx, input: { n: number }) => {
    let last = -1;
    for (let i = 0; i < input.n; i++) last = (await ctx.action(tick, { i }).run()).i;
    return { last };
  },
});
const listener = defineFlow({
  name: 'r49.listener',
  version: 1,
  run: async (ctx, input: { n: number }) => {
    const seen: number[] = [];
    for (let i = 0; i < input.n; i++) {
      const got = await ctx.awaitSignal<{ i: number }>('tick', { timeoutSeconds: 86_400 });
      seen.push(got?.i ?? -1);
    }
    return { count: seen.length, inOrder: seen.every((v, k) => v === k) };
  },
});

interface Reads {
  tuples: number;
  perTable: Record<string, number>;
}

/** Rows read from the engine's tables so far, as the server counted them. */
async function rowsRead(db: Database): Promise<Reads> {
  if (db.kind === 'pglite') await db.driver.query('select pg_stat_force_next_flush()');
  const rows = await db.driver.query<{ relname: string; n: string }>(
    `select relname, (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::text as n
       from pg_stat_user_tables where schemaname = 'sagaflow'`,
  );
  const perTable: Record<string, number> = {};
  for (const r of rows) perTable[r.relname] = Number(r.n);
  return { tuples: Object.values(perTable).reduce((a, b) => a + b, 0), perTable };
}

/** Runs `work` on a fresh database; counts the statements it sent and the rows the server read. */
async function measure(
  work: (t: Awaited<ReturnType<typeof createTestEngine>>) => Promise<void>,
  flows = [loop, listener],
): Promise<{ statements: number; reads: Reads }> {
  const base = await openTestDatabase();
  const counted = countStatements(base);
  const t = await createTestEngine({ flows, actions: [tick], db: counted.db });
  let before: Reads;
  if (base.kind === 'pglite') before = await rowsRead(base);
  else before = { tuples: 0, perTable: {} };
  counted.sent.length = 0;
  await work(t);
  const statements = counted.sent.length;
  await t.close();
  let after: Reads;
  if (base.kind === 'pglite') {
    after = await rowsRead(base);
    await base.close();
  } else {
    // The engine's backends report their counts as they exit: read them from a fresh connection.
    const url = (base as Database & { url: string }).url;
    await base.close();
    const reader = await createDatabase({ kind: 'postgres', url, poolSize: 1 });
    // Stats of exited backends land shortly after they go: wait until two reads agree.
    let prev = -1;
    after = await rowsRead(reader);
    await waitFor('the exited backends to report their reads', async () => {
      prev = after.tuples;
      await new Promise((r) => setTimeout(r, 200));
      after = await rowsRead(reader);
      return after.tuples === prev && after.tuples > 0 ? true : undefined;
    });
    await reader.close();
  }
  const perTable: Record<string, number> = {};
  for (const [k, v] of Object.entries(after.perTable)) perTable[k] = v - (before.perTable[k] ?? 0);
  return { statements, reads: { tuples: after.tuples - before.tuples, perTable } };
}

const figures: string[] = [];
afterAll(() => {
  console.log(`review 49 figures (${testDbKind()}):\n${figures.join('\n')}`);
});

describe(`cost per step as a run grows (${testDbKind()})`, () => {
  it('a loop of 3,000 steps reads no more rows per step than a loop of 100', { timeout: 600_000 }, async () => {
    const at = async (n: number) =>
      measure(async (t) => {
        const done = await t.runToCompletion(loop, { n }, { timeoutMs: 500_000 });
        expect(done.run.status).toBe('Completed');
        expect(done.run.output).toEqual({ last: n - 1 });
      });
    const short = await at(100);
    const long = await at(3000);
    const line = (n: number, m: { statements: number; reads: Reads }) =>
      `loop n=${n}: ${(m.statements / n).toFixed(2)} statements/step, ${(m.reads.tuples / n).toFixed(2)} rows read/step ${JSON.stringify(m.reads.perTable)}`;
    figures.push(line(100, short), line(3000, long));
    expect(long.statements / 3000).toBeLessThanOrEqual((short.statements / 100) * 1.5);
    expect(long.reads.tuples / 3000, figures.join('\n')).toBeLessThanOrEqual(Math.max(10, (short.reads.tuples / 100) * 1.5));
  });

  it('a run woken once per signal reads no more rows per wake at 300 signals than at 30', { timeout: 600_000 }, async () => {
    const at = async (n: number) =>
      measure(async (t) => {
        const { runId } = await t.engine.startFlow(listener, { n });
        t.engine.startWorkers();
        for (let i = 0; i < n; i++) {
          // One wake per signal: send the next once the run waits for it again (progress, not time).
          await waitFor(
            `the run to wait for signal ${i}`,
            async () => {
              const waiting = await t.db.prisma.actionRun.count({
                where: { run_id: runId, kind: 'signal', status: 'Waiting' },
              });
              const all = await t.db.prisma.actionRun.count({ where: { run_id: runId, kind: 'signal' } });
              return waiting === 1 && all === i + 1 ? true : undefined;
            },
            30_000,
          );
          await t.engine.signal(runId, 'tick', { i });
        }
        const done = await t.drive(runId, { timeoutMs: 60_000 });
        expect(done.run.status).toBe('Completed');
        expect(done.run.output).toEqual({ count: n, inOrder: true });
      });
    const short = await at(30);
    const long = await at(300);
    const line = (n: number, m: { statements: number; reads: Reads }) =>
      `signals n=${n}: ${(m.statements / n).toFixed(2)} statements/wake, ${(m.reads.tuples / n).toFixed(2)} rows read/wake ${JSON.stringify(m.reads.perTable)}`;
    figures.push(line(30, short), line(300, long));
    expect(long.reads.tuples / 300, figures.join('\n')).toBeLessThanOrEqual(Math.max(10, (short.reads.tuples / 30) * 1.5));
  });
});
