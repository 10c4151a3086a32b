/**
 * Measures the sweeps on a backlog (issue 12 §2, ADR 0026): 100 k overdue steps (beside 100 k
 * finished ones whose old deadline has passed too) drained by one step sweep, and one doctor pass
 * over 100 k open runs whose job was lost. A throwaway PostgreSQL 15 cluster (test-postgres's
 * settings: fsync off), rows seeded by set-based SQL and ANALYZEd, then the engine's own sweep
 * called once with a pass budget large enough to drain. Prints rows/s; a measurement, not a test.
 *
 *   pnpm --filter @sagaflow/bench exec tsx src/measure-sweeps.ts [--steps 100000] [--runs 100000] [--batch 1000]
 */
import { parseArgs } from 'node:util';
import { createDatabase, createEngine, migrate, type Database } from '@sagaflow/engine';
import { seedLostRuns, seedOverdueSteps } from '@sagaflow/engine/testing';
import { createDatabase as createPgDatabase, startCluster } from '@sagaflow/test-postgres';
import { pino } from 'pino';
import { progress } from './progress.ts';

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '100000' },
    batch: { type: 'string', default: '1000' },
  },
});
const steps = Number(values.steps);
const runs = Number(values.runs);
const batch = Number(values.batch);

async function timed<T>(label: string, work: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  progress(`${label}…`);
  const start = performance.now();
  const value = await work();
  const seconds = (performance.now() - start) / 1000;
  progress(`${label}: ${seconds.toFixed(1)} s`);
  return { value, seconds };
}

async function measure(db: Database) {
  const engine = createEngine({
    db,
    flows: [],
    actions: [],
    logger: pino({ level: 'silent' }),
    config: { sweeps: { pass_budget_ms: 600_000, batch_size: batch } },
  });
  const hourAgo = new Date(Date.now() - 3_600_000);
  await timed(`seed ${steps} overdue + ${steps} finished steps`, () =>
    seedOverdueSteps(db, { flowName: 'bench-sweeps', overdue: steps, finished: steps, overdueAt: hourAgo }),
  );
  await db.prisma.$executeRawUnsafe('analyze');
  const expiry = await timed('step sweep', () => engine.sweepExpiredSteps());
  await timed(`seed ${runs} lost runs`, () =>
    seedLostRuns(db, { flowName: 'bench-doctor', lost: runs, createdAt: hourAgo }),
  );
  await db.prisma.$executeRawUnsafe('analyze');
  const doctor = await timed('doctor pass', () => engine.sweepDoctor());
  return [
    { sweep: 'expired_steps', rows: expiry.value.expired, seconds: expiry.seconds },
    { sweep: 'doctor', rows: doctor.value.redispatched.length, seconds: doctor.seconds },
  ];
}

const cluster = await startCluster({ log: (line) => progress(`test-postgres: ${line}`) });
try {
  const url = await createPgDatabase(cluster.adminUrl, 'bench_sweeps');
  const db = await createDatabase({ kind: 'postgres', url, poolSize: 4 });
  try {
    await migrate(db);
    for (const r of await measure(db))
      process.stdout.write(
        `${r.sweep} (batch ${batch}): ${r.rows} rows in ${r.seconds.toFixed(1)} s = ${Math.round(r.rows / r.seconds)} rows/s\n`,
      );
  } finally {
    await db.close();
  }
} finally {
  await cluster.stop();
}
