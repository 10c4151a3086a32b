import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase, createEngine, defineAction, defineFlow, migrate, type Database } from '@sagaflow/engine';
import { pino } from 'pino';
import { progress } from './progress.ts';

export interface PgliteFloor {
  readonly runs: number;
  readonly engineMs: number;
  readonly handWrittenMs: number;
}

const noop = defineAction({ name: 'bench.noop', run: async (i: { n: number }) => ({ n: i.n }) });
const oneStep = defineFlow({
  name: 'bench.one-step',
  version: 1,
  run: async (ctx, i: { n: number }) => ctx.action(noop, i),
});

/**
 * Engine overhead against its floor on the same embedded database: `runs` one-step flows through the
 * engine (start, claim, record, finish, with history) versus the same number of steps recorded by
 * hand as the smallest durable write a step needs (insert a row, then update it, one transaction
 * each). Reported as a ratio; not a threshold.
 */
export async function runPgliteFloor(runs: number): Promise<PgliteFloor> {
  progress(`PGlite: ${runs} one-step flows through the engine, then ${runs} hand-written steps (in memory)`);
  const db = await createDatabase({ kind: 'pglite' });
  try {
    await migrate(db);
    const engineMs = await engineRuns(db, runs);
    const handWrittenMs = await handWritten(db, runs);
    return { runs, engineMs, handWrittenMs };
  } finally {
    await db.close();
  }
}

async function engineRuns(db: Database, runs: number): Promise<number> {
  const engine = createEngine({
    db,
    flows: [oneStep],
    actions: [noop],
    config: { worker: { poll_interval_ms: 10, concurrency: 4 }, logging: { anomaly_level: null } },
    logger: pino({ name: 'sagaflow', level: 'warn' }, pino.destination(2)),
  });
  const t0 = performance.now();
  engine.startWorkers();
  try {
    for (let i = 0; i < runs; i++) await engine.startFlow(oneStep, { n: i });
    while ((await db.prisma.flowRun.count({ where: { status: { not: 'Completed' } } })) > 0) await sleep(10);
    return performance.now() - t0;
  } finally {
    await engine.stopWorkers();
  }
}

async function handWritten(db: Database, runs: number): Promise<number> {
  await db.driver.exec(
    'create table if not exists bench_steps (id serial primary key, status text not null, output jsonb)',
  );
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) {
    await db.driver.transaction(async (tx) => {
      const [row] = await tx.query<{ id: number }>(`insert into bench_steps (status) values ('Running') returning id`);
      await tx.query(`update bench_steps set status = 'Completed', output = $2 where id = $1`, [
        row?.id,
        JSON.stringify({ n: i }),
      ]);
    });
  }
  return performance.now() - t0;
}
