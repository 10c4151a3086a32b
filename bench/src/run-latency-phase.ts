import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase } from '@sagaflow/test-postgres';
import { createBenchFlow, stepsPerFlow } from './bench-flow.ts';
import { instrumentPgQueries, type StatementTiming, type TransactionTiming } from './instrument-pg-queries.ts';
import { asObserver, observerRole } from './observer-role.ts';
import { openBenchEngine } from './open-bench-engine.ts';
import { progress } from './progress.ts';
import { coresBusy, readCpuTimes, type CpuTimes } from './read-cpu-times.ts';
import { readStatementStats, resetStatementStats, type StatementGroup } from './read-statement-stats.ts';
import { RunObserver } from './run-observer.ts';
import type { PhaseSetup } from './run-throughput-phase.ts';

export interface LatencyResult {
  readonly flows: number;
  readonly steps: number;
  readonly warmup: number;
  readonly pollMs: number;
  /** Per run: finished_at − created_at, from its flow_runs row. */
  readonly dbLatencyMs: number[];
  /** Per run: the startFlow call to the poll that saw it Completed. */
  readonly observedLatencyMs: number[];
  /** The measured loop's wall time: runs back to back, each started once the previous was seen Completed. */
  readonly loopMs: number;
  readonly actionMs: number;
  /** What the driver saw, from `pg.Client#query` (the engine's connections only). */
  readonly driver: {
    readonly statements: Map<string, StatementTiming>;
    readonly autocommit: Map<string, StatementTiming>;
    readonly transactions: TransactionTiming[];
  };
  /** What the server saw, from pg_stat_statements; null when it is unavailable. */
  readonly statements: StatementGroup[] | null;
  /** CPU time per run over the measured loop: this Node process (engine, Prisma, bench) and PostgreSQL. */
  readonly cpuMsPerRun: { readonly node: number; readonly postgres: number | null; readonly otherCores: number | null };
}

/**
 * Latency of one run with nothing else going on, and where its time goes: one engine with a pool of
 * one; each run is started, polled every `pollMs` until Completed, and only then the next one
 * started. The first `warmup` runs are not measured (JIT, the new Prisma client's first queries).
 */
export async function runLatencyPhase(
  setup: PhaseSetup,
  options: { flows: number; warmup: number; pollMs: number },
): Promise<LatencyResult> {
  const { flows, warmup, pollMs } = options;
  const name = 'bench_latency';
  const url = await createDatabase(setup.adminUrl, name, { template: setup.template });
  const bench = createBenchFlow();
  const { db, engine } = await openBenchEngine(url, 1, bench);
  const observer = await RunObserver.open(asObserver(url));
  const recorder = instrumentPgQueries((client) => client === observer.client);
  const observedLatencyMs: number[] = [];
  const measured = new Set<string>();
  let loopStart = 0;
  let loopMs: number;
  let driver: LatencyResult['driver'] | undefined;
  let cpuBefore: CpuTimes | undefined;
  let cpuAfter: CpuTimes | undefined;
  try {
    engine.startWorkers();
    progress(`latency: ${warmup} warm-up runs, then ${flows} runs one at a time (pool of 1)`);
    for (let i = 0; i < warmup + flows; i++) {
      if (i === warmup) {
        if (setup.statementsEnabled) await resetStatementStats(setup.adminUrl, name);
        recorder.reset();
        bench.actionTime.calls = 0;
        bench.actionTime.ms = 0;
        cpuBefore = await readCpuTimes(setup.dataDir);
        loopStart = performance.now();
      }
      const startedAt = performance.now();
      const { runId } = await engine.startFlow(bench.flow, { n: i });
      for (;;) {
        const status = await observer.runStatus(runId);
        if (status === 'Completed') break;
        if (status !== null && !['Pending', 'Running'].includes(status)) {
          throw new Error(`latency: run ${runId} ended ${status}: ${await observer.describeUnfinished()}`);
        }
        if (performance.now() - startedAt > 30_000) throw new Error(`latency: run ${runId} still ${status} after 30 s`);
        await sleep(pollMs);
      }
      if (i >= warmup) {
        observedLatencyMs.push(performance.now() - startedAt);
        measured.add(runId);
      }
    }
    loopMs = performance.now() - loopStart;
    cpuAfter = await readCpuTimes(setup.dataDir);
    driver = {
      statements: copyTimings(recorder.statements),
      autocommit: copyTimings(recorder.autocommit),
      transactions: [...recorder.transactions],
    };
  } finally {
    recorder.uninstall();
    await engine.stopWorkers();
    await db.close();
  }
  const times = (await observer.completedRunTimes()).filter((t) => measured.has(t.id));
  await observer.close();
  const statements = setup.statementsEnabled ? await readStatementStats(setup.adminUrl, name, observerRole) : null;
  const dbLatencyMs = times.map((t) => t.finishedMs - t.createdMs);
  progress(`latency: ${flows} runs, ${(loopMs / flows).toFixed(1)} ms each back to back`);
  return {
    flows,
    steps: flows * stepsPerFlow,
    warmup,
    pollMs,
    dbLatencyMs,
    observedLatencyMs,
    loopMs,
    actionMs: bench.actionTime.ms,
    driver,
    statements,
    cpuMsPerRun: cpuPerRun(cpuBefore, cpuAfter, flows, loopMs),
  };
}

function copyTimings(timings: Map<string, StatementTiming>): Map<string, StatementTiming> {
  return new Map([...timings].map(([label, t]) => [label, { ...t }]));
}

function cpuPerRun(before: CpuTimes | undefined, after: CpuTimes | undefined, runs: number, loopMs: number) {
  if (before === undefined || after === undefined) return { node: Number.NaN, postgres: null, otherCores: null };
  const busy = coresBusy(before, after, loopMs);
  return {
    node: busy.node * (loopMs / runs),
    postgres: busy.postgres === null ? null : busy.postgres * (loopMs / runs),
    otherCores: busy.other,
  };
}
