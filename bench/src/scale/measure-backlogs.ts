import { createEngine, inProcessTransport, publishOutboxBatch, type Database } from '@sagaflow/engine';
import { seedLostRuns, seedOverdueSteps } from '@sagaflow/engine/testing';
import { pino } from 'pino';

/** One sweep draining a backlog: rows done in wall time. */
export interface BacklogResult {
  sweep: string;
  setting: string;
  rows: number;
  seconds: number;
  rowsPerSecond: number;
}

async function timed(sweep: string, setting: string, log: (line: string) => void, work: () => Promise<number>) {
  log(`${sweep} (${setting})…`);
  const start = performance.now();
  const rows = await work();
  const seconds = (performance.now() - start) / 1000;
  const result = { sweep, setting, rows, seconds, rowsPerSecond: rows / seconds };
  log(`${sweep} (${setting}): ${rows} rows in ${seconds.toFixed(1)} s = ${Math.round(result.rowsPerSecond)} rows/s`);
  return result;
}

/**
 * The sweeps on backlogs laid over the console's history (so their partial indexes sit beside a
 * million finished runs): the monitor's step sweep over `size` overdue steps, one doctor pass over
 * `size` runs whose job was lost, and the outbox publisher draining `size` Pending rows (100 per
 * source) to an in-process transport at its default batch and at its largest, each for at most
 * `publisherBudgetMs` (a publisher slower than the backlog is reported with what it left). Each backlog is seeded
 * by set-based SQL and ANALYZEd outside the timed call; each call is the engine's own, with a pass
 * budget large enough to drain.
 */
export async function measureBacklogs(
  db: Database,
  size: number,
  publisherBudgetMs: number,
  log: (line: string) => void,
): Promise<BacklogResult[]> {
  const engine = createEngine({
    db,
    flows: [],
    actions: [],
    logger: pino({ level: 'silent' }),
    config: { sweeps: { pass_budget_ms: 600_000 } },
  });
  const hourAgo = new Date(Date.now() - 3_600_000);
  const results: BacklogResult[] = [];
  await seedOverdueSteps(db, { flowName: 'scale.overdue', overdue: size, finished: 0, overdueAt: hourAgo });
  await db.driver.exec('analyze');
  results.push(
    await timed('monitor: overdue steps expired', 'sweeps.batch_size 1000', log, async () => {
      const { expired } = await engine.sweepExpiredSteps();
      return expired;
    }),
  );
  await seedLostRuns(db, { flowName: 'scale.lost', lost: size, createdAt: hourAgo });
  await db.driver.exec('analyze');
  results.push(
    await timed('doctor: lost runs re-dispatched', 'sweeps.batch_size 1000', log, async () => {
      const { redispatched } = await engine.sweepDoctor();
      return redispatched.length;
    }),
  );
  for (const batch of [100, 1000]) {
    await db.driver.query(
      `insert into "sagaflow"."outbox" (message_id, source_kind, source_id, type, destination, payload, available_at)
       select 'drain-${batch}-' || g, 'process', 'drain-${batch}-' || (g % $1::int), 'BenchMessage', 'bench',
              jsonb_build_object('g', g), now() - interval '1 minute'
         from generate_series(1, $2::int) g`,
      [Math.max(1, Math.floor(size / 100)), size],
    );
    await db.driver.exec('analyze "sagaflow"."outbox"');
    let delivered = 0;
    const routes = { bench: inProcessTransport(() => void delivered++) };
    const deadline = performance.now() + publisherBudgetMs;
    const result = await timed('outbox publisher: rows published', `outbox.batch_size ${batch}`, log, async () => {
      for (;;) {
        const pass = await publishOutboxBatch({ db, routes, config: { batch_size: batch } });
        if (pass.claimed === 0 || performance.now() > deadline) return delivered;
      }
    });
    const [left] = await db.driver.query<{ n: number }>(
      `select count(*)::int as n from "sagaflow"."outbox" where status = 'Pending' and destination = 'bench'`,
    );
    if (left && left.n > 0) {
      result.setting += `, stopped after ${publisherBudgetMs / 1000} s with ${left.n} rows left`;
      await db.driver.query(`delete from "sagaflow"."outbox" where status = 'Pending' and destination = 'bench'`);
    }
    results.push(result);
  }
  return results;
}
