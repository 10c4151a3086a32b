import { createDatabase as createPgDatabase, startCluster, type PgCluster } from '@sagaflow/test-postgres';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type EngineOptions } from '../../../src/create-engine.ts';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { defineAction, defineFlow, NonRetryableError } from '../../../src/index.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate, sleep } from '../harness.ts';

/**
 * Issue 13, item 2. Default config (reclaim off), one worker, a run of three 1 s steps. PostgreSQL
 * is stopped while step 1 runs, step 1 then finishes, and its completed outcome meets a database
 * that is not there. The worker that holds the outcome must write it once the database is back: the
 * run completes, no step is left Running, every side effect ran exactly once. The outage follows
 * progress, not a clock: the server comes back only once the worker has tried (and failed) to write
 * the outcome, or has given up its bounded retry and holds the outcome in memory. Its own cluster:
 * it stops the server.
 */
const ran: string[] = [];
const gates = {
  short: { started: gate(), release: gate() },
  long: { started: gate(), release: gate() },
  failing: { started: gate(), release: gate() },
};
type Outage = keyof typeof gates;
const step = (n: number) =>
  defineAction({
    name: `step-${n}`,
    run: async (outage: Outage) => {
      ran.push(`${outage}:step-${n}`);
      if (n === 1) {
        gates[outage].started.open();
        await gates[outage].release.promise; // the outage begins while the step runs
        if (outage === 'failing') throw new NonRetryableError('declined');
      }
      await sleep(1000);
      return { n };
    },
  });
const steps = [step(1), step(2), step(3)] as const;
const flow = defineFlow({
  name: 'three-steps-through-an-outage',
  version: 1,
  run: async (ctx, outage: Outage) => {
    for (const s of steps) await ctx.action(s, outage);
    return 'done';
  },
});

describe('wave 2: a completed step outcome survives a database outage (real PostgreSQL, stopped and started)', () => {
  let cluster: PgCluster;
  let db: Database;
  beforeAll(async () => {
    cluster = await startCluster();
    const url = await createPgDatabase(cluster.adminUrl, 'outage');
    db = await createDatabase({ kind: 'postgres', url, poolSize: 4 });
    await migrate(db);
  }, 120_000);
  afterAll(async () => {
    for (const g of Object.values(gates)) g.release.open();
    await db?.close().catch(() => undefined);
    await cluster?.stop();
  });

  /** Runs one flow through an outage that ends once the worker's log shows `until`. */
  async function throughOutage(outage: Outage, until: string, worker: NonNullable<EngineOptions['config']>['worker']) {
    const lines: { msg?: string; outcomes?: { name: string; output: unknown }[] }[] = [];
    const engine = createEngine({
      db,
      flows: [flow],
      actions: [...steps],
      logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as never) }),
      config: { worker: { concurrency: 1, poll_interval_ms: 50, ...worker }, logging: { anomaly_level: null } },
    });
    engine.startWorkers();
    try {
      const { runId } = await engine.startFlow(flow, outage);
      await gates[outage].started.promise;
      await cluster.pause();
      try {
        gates[outage].release.open(); // step 1 finishes while PostgreSQL is down...
        // ...and PostgreSQL stays down until the worker has met the outage with the outcome in hand
        // (or, without the fix, given the job up).
        await waitFor(
          `the worker to log "${until}"`,
          async () =>
            lines.some((l) => l.msg?.startsWith(until) || l.msg?.startsWith('job failed')) ? true : undefined,
          120_000,
        );
      } finally {
        await cluster.resume();
      }
      const run = await waitFor(
        'the run to finish',
        async () => {
          const r = await db.prisma.flowRun.findUnique({ where: { id: runId } }).catch(() => null);
          return r && ['Completed', 'Failed', 'Expired', 'Compensated', 'TimedOut'].includes(r.status) ? r : undefined;
        },
        150_000,
      );
      const rows = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
      const lost = await db.prisma.anomalyLog.count({
        where: { run_id: runId, code: { in: ['outcome_rejected', 'write_refused'] } },
      });
      return { run, rows, lost, lines };
    } finally {
      await engine.stopWorkers(5000);
    }
  }

  const expected = (outage: Outage) => ({
    run: 'Completed',
    rows: ['step-1:Completed:1', 'step-2:Completed:1', 'step-3:Completed:1'],
    ran: [`${outage}:step-1`, `${outage}:step-2`, `${outage}:step-3`],
    lost: 0,
  });

  it('a short outage: the bounded retry writes the outcome once the database is back; each side effect ran once', async () => {
    const { run, rows, lost } = await throughOutage('short', 'writing step outcomes failed; trying again', {});
    expect({
      run: run.status,
      rows: rows.map((r) => `${r.name}:${r.status}:${r.attempts}`),
      ran: ran.filter((r) => r.startsWith('short:')),
      lost,
    }).toEqual(expected('short'));
  }, 240_000);

  it('an outage longer than the retry: the worker keeps the outcome, logs it with its payload, and writes it when the database is back', async () => {
    const { run, rows, lost, lines } = await throughOutage('long', 'step outcomes could not be written', {
      outcome_retry: { max_attempts: 2, base_delay_ms: 10, max_delay_ms: 10 },
    });
    const held = lines.find((l) => l.msg?.startsWith('step outcomes could not be written'));
    expect({
      run: run.status,
      rows: rows.map((r) => `${r.name}:${r.status}:${r.attempts}`),
      ran: ran.filter((r) => r.startsWith('long:')),
      lost,
      held: held?.outcomes?.map((o) => [o.name, o.output]),
      written: lines.some((l) => l.msg === 'held step outcomes written'),
    }).toEqual({ ...expected('long'), held: [['step-1', { n: 1 }]], written: true });
  }, 240_000);

  it('a step that fails during the outage: its failure is kept and written, so the run ends Failed and nothing stays Running', async () => {
    const { run, rows, lost } = await throughOutage('failing', 'writing step outcomes failed; trying again', {});
    expect({
      run: run.status,
      rows: rows.map((r) => `${r.name}:${r.status}:${r.attempts}`),
      ran: ran.filter((r) => r.startsWith('failing:')),
      lost,
    }).toEqual({ run: 'Failed', rows: ['step-1:Errored:1'], ran: ['failing:step-1'], lost: 0 });
  }, 240_000);
});
