import { createDatabase, createEngine, defineAction, defineFlow, migrate, type Database } from '@sagaflow/engine';

// Engine overhead against its floor, in one run on the same embedded database: N one-step flows
// through the engine (start, claim, record, finish, with history) versus the same N steps recorded
// by hand as the smallest durable write a step needs (insert a row, then update it, one
// transaction each). Reported as a ratio; nothing here is a pass/fail threshold.
const N = Number(process.argv[2] ?? 200);

const noop = defineAction({ name: 'bench.noop', run: async (i: { n: number }) => ({ n: i.n }) });
const oneStep = defineFlow({
  name: 'bench.one-step',
  version: 1,
  run: async (ctx, i: { n: number }) => ctx.action(noop, i),
});

async function engineRuns(db: Database): Promise<number> {
  const engine = createEngine({
    db,
    flows: [oneStep],
    actions: [noop],
    config: { worker: { poll_interval_ms: 10, concurrency: 4 }, logging: { anomaly_level: null } },
  });
  const t0 = performance.now();
  engine.startWorkers();
  for (let i = 0; i < N; i++) await engine.startFlow(oneStep, { n: i });
  for (;;) {
    const open = await db.prisma.flowRun.count({ where: { status: { not: 'Completed' } } });
    if (open === 0) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const ms = performance.now() - t0;
  await engine.stopWorkers();
  return ms;
}

async function handWritten(db: Database): Promise<number> {
  await db.driver.exec(
    'create table if not exists bench_steps (id serial primary key, status text not null, output jsonb)',
  );
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
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

const db = await createDatabase({ kind: 'pglite' });
await migrate(db);
process.stderr.write(
  `running ${N} one-step flows through the engine, then ${N} hand-written steps (PGlite, in memory)…\n`,
);
const engineMs = await engineRuns(db);
const refMs = await handWritten(db);
await db.close();

const rate = (ms: number) => ((N * 1000) / ms).toFixed(0);
console.log(`| measure | runs | wall ms | per second |`);
console.log(`| --- | ---: | ---: | ---: |`);
console.log(`| sagaflow one-step flow | ${N} | ${engineMs.toFixed(0)} | ${rate(engineMs)} |`);
console.log(`| reference: insert+update per step | ${N} | ${refMs.toFixed(0)} | ${rate(refMs)} |`);
console.log(`\nratio (engine time / reference time): ${(engineMs / refMs).toFixed(2)}x`);
