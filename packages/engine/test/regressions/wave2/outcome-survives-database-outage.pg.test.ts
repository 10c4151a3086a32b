import { createDatabase as createPgDatabase, startCluster, type PgCluster } from '@sagaflow/test-postgres';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/create-engine.ts';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate, sleep } from '../harness.ts';

/**
 * Issue 13, item 2. Default config (reclaim off), one worker, three 1 s steps. PostgreSQL is stopped
 * while step 1 runs and started again 2.5 s later, so step 1's completed outcome meets a database
 * that is not there. The worker that holds the outcome must write it once the database is back:
 * the run completes, every side effect ran exactly once. Its own cluster: it stops the server.
 */
const ran: string[] = [];
const started = gate();
const release = gate();
const step = (n: number) =>
  defineAction({
    name: `step-${n}`,
    run: async () => {
      ran.push(`step-${n}`);
      if (n === 1) {
        started.open();
        await release.promise; // the outage begins while the step runs
      }
      await sleep(1000);
      return { n };
    },
  });
const steps = [step(1), step(2), step(3)] as const;
const flow = defineFlow({
  name: 'three-steps-through-an-outage',
  version: 1,
  run: async (ctx) => {
    for (const s of steps) await ctx.action(s, null);
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
    release.open();
    await db?.close().catch(() => undefined);
    await cluster?.stop();
  });

  it('the outcome held through the outage is written once the database is back; each side effect ran once', async () => {
    const engine = createEngine({
      db,
      flows: [flow],
      actions: [...steps],
      logger: pino({ level: 'silent' }),
      config: { worker: { concurrency: 1, poll_interval_ms: 50 }, logging: { anomaly_level: null } },
    });
    engine.startWorkers();
    try {
      const { runId } = await engine.startFlow(flow, null);
      await started.promise;
      await cluster.restart({
        whileDown: async () => {
          release.open(); // step 1 finishes while PostgreSQL is down...
          await sleep(2500); // ...and stays down for 2.5 s
        },
      });
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
      expect({
        run: run.status,
        rows: rows.map((r) => `${r.name}:${r.status}:${r.attempts}`),
        ran: [...ran].sort(),
        lost,
      }).toEqual({
        run: 'Completed',
        rows: ['step-1:Completed:1', 'step-2:Completed:1', 'step-3:Completed:1'],
        ran: ['step-1', 'step-2', 'step-3'],
        lost: 0,
      });
    } finally {
      await engine.stopWorkers(5000);
    }
  }, 240_000);
});
