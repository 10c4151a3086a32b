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
       from pg_stat_user_tables where schemaname = 'sagaflow'
     union all
     select 'scans of ' || indexrelname, idx_scan::text from pg_stat_user_indexes
      where schemaname = 'sagaflow' and relname = 'action_runs'
     union all
     select 'rows of ' || indexrelname, idx_tup_fetch::text from pg_stat_user_indexes
      where schemaname = 'sagaflow' and relname = 'action_runs'`,
  );
  const perTable: Record<string, number> = {};
  for (const r of rows) perTable[r.relname] = Number(r.n);
  const tuples = Object.entries(perTable).reduce((a, [k, v]) => (k.includes(' of ') ? a : a + v), 0);
  return { tuples, perTable };
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

/** Waits for the run to end, reading only its own flow_runs row (a run detail would read every step). */
async function untilEnded(t: Awaited<ReturnType<typeof createTestEngine>>, runId: string, timeoutMs: number) {
  t.engine.startWorkers();
  return waitFor(
    `run ${runId} to end`,
    async () => {
      await new Promise((r) => setTimeout(r, 100));
      const run = await t.db.prisma.flowRun.findUniqueOrThrow({
        where: { id: runId },
        select: { status: true, output: true, stuck_reason: true },
      });
      return ['Pending', 'Running', 'Waiting', 'Compensating'].includes(run.status) ? undefined : run;
    },
    timeoutMs,
  );
}

/** The rows read that the engine's own work accounts for: its step rows and its history. */
const engineReads = (r: Reads) => (r.perTable.action_runs ?? 0) + (r.perTable.flow_events ?? 0);

/** Scans and rows fetched per action_runs index, where there were any. */
const indexes = (r: Reads) =>
  Object.entries(r.perTable)
    .filter(([k, v]) => k.startsWith('scans of ') && v > 0)
    .map(([k, v]) => `${k.slice(9)} ${v} scans / ${r.perTable[`rows of ${k.slice(9)}`]} rows`)
    .join(', ');

const figures: string[] = [];
afterAll(() => {
  console.log(`review 49 figures (${testDbKind()}):\n${figures.join('\n')}`);
});

describe(`cost per step as a run grows (${testDbKind()})`, () => {
  it('a loop of 3,000 steps reads no more rows per step than a loop of 100', { timeout: 600_000 }, async () => {
    const at = async (n: number) =>
      measure(async (t) => {
        const { runId } = await t.engine.startFlow(loop, { n });
        const done = await untilEnded(t, runId, 500_000);
        expect(done.status).toBe('Completed');
        expect(done.output).toEqual({ last: n - 1 });
      });
    const short = await at(100);
    const long = await at(3000);
    const line = (n: number, m: { statements: number; reads: Reads }) =>
      `loop n=${n}: ${(m.statements / n).toFixed(2)} statements/step, ${(engineReads(m.reads) / n).toFixed(2)} step+history rows read/step (action_runs ${m.reads.perTable.action_runs}, flow_events ${m.reads.perTable.flow_events}); by index: ${indexes(m.reads)}`;
    figures.push(line(100, short), line(3000, long));
    expect(long.statements / 3000).toBeLessThanOrEqual((short.statements / 100) * 1.5);
    expect(engineReads(long.reads) / 3000, figures.join('\n')).toBeLessThanOrEqual(
      Math.max(10, (engineReads(short.reads) / 100) * 1.5),
    );
  });

  it('a run woken once per signal reads its record once per wake, no more', { timeout: 600_000 }, async () => {
    const at = async (n: number) =>
      measure(async (t) => {
        const { runId } = await t.engine.startFlow(listener, { n });
        t.engine.startWorkers();
        for (let i = 0; i < n; i++) {
          // One wake per signal: send the next once the run waits for it again (progress, not time).
          // (read from the signals and the run's own row only: the measure counts step rows and history)
          await waitFor(
            `the run to wait for signal ${i}`,
            async () => {
              const consumed = await t.db.prisma.signal.count({ where: { run_id: runId, status: 'Consumed' } });
              const run = await t.db.prisma.flowRun.findUniqueOrThrow({
                where: { id: runId },
                select: { status: true },
              });
              return consumed === i && run.status === 'Waiting' ? true : undefined;
            },
            30_000,
            // 330 waits one after another: a 25 ms pause each was a third of this test's time.
            5,
          );
          await t.engine.signal(runId, 'tick', { i });
        }
        const done = await untilEnded(t, runId, 60_000);
        expect(done.status).toBe('Completed');
        expect(done.output).toEqual({ count: n, inOrder: true });
      });
    const short = await at(30);
    const long = await at(300);
    const line = (n: number, m: { statements: number; reads: Reads }) =>
      `signals n=${n}: ${(m.statements / n).toFixed(2)} statements/wake, ${(engineReads(m.reads) / n).toFixed(2)} step+history rows read/wake (action_runs ${m.reads.perTable.action_runs}, flow_events ${m.reads.perTable.flow_events})`;
    figures.push(line(30, short), line(300, long));
    // A replay reads the run's record (its k steps) once per wake, by design (ADR 0003): the k-th wake
    // reads k rows. Held: no more than that and a few rows per wake; the figure grows with the run.
    const bound = (n: number) => (n * (n + 1)) / 2 + 5 * n;
    expect(engineReads(short.reads), figures.join('\n')).toBeLessThanOrEqual(bound(30));
    expect(engineReads(long.reads), figures.join('\n')).toBeLessThanOrEqual(bound(300));
  });
});
