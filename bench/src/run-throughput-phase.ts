import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase } from '@sagaflow/test-postgres';
import { createBenchFlow, stepsPerFlow } from './bench-flow.ts';
import { asObserver, observerRole } from './observer-role.ts';
import { openBenchEngine } from './open-bench-engine.ts';
import { percentile } from './percentile.ts';
import { progress } from './progress.ts';
import { coresBusy, readCpuTimes, type CoresBusy, type CpuTimes } from './read-cpu-times.ts';
import { readDatabaseCounters, waitForNoSessions } from './read-database-counters.ts';
import { readStatementStats, type StatementGroup } from './read-statement-stats.ts';
import { RunObserver } from './run-observer.ts';
import { waitForFinishedRuns, type LoadState } from './wait-for-finished-runs.ts';

export interface PhaseSetup {
  readonly adminUrl: string;
  readonly template: string;
  readonly statementsEnabled: boolean;
  /** The cluster's data directory, to find its processes' CPU time. */
  readonly dataDir: string;
}

export interface ThroughputResult {
  readonly concurrency: number;
  readonly poolSize: number;
  readonly flows: number;
  readonly steps: number;
  /** The most started-but-unfinished runs the starters allowed. */
  readonly maxOpen: number;
  /** Runs in status Running at once, the mean of the observer's polls (every 20 ms) over the window. */
  readonly meanRunning: number;
  /** The engine's database sessions by state, mean count per poll, busiest first. */
  readonly meanSessions: ReadonlyArray<readonly [state: string, mean: number]>;
  /** First run's created_at to last run's finished_at, from the flow_runs rows. */
  readonly windowMs: number;
  /** The same window on the client clock: first startFlow call to the poll that saw the last run finished. */
  readonly observedWindowMs: number;
  /** When the last startFlow call returned, on the client clock, from the first call. */
  readonly startsDoneMs: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  /** Committed transactions in the phase's database, the bench observer's own subtracted. */
  readonly commits: number;
  readonly rollbacks: number;
  /** Transactions given a transaction id (those that wrote or locked rows), cluster-wide. */
  readonly writeTransactions: number;
  readonly statements: StatementGroup[] | null;
  /** Average cores busy over the client-clock window: this Node process (engine, Prisma, bench) and PostgreSQL. */
  readonly cpu: CoresBusy;
}

/**
 * The three-step flow through one engine whose pool runs `concurrency` at once, on a fresh copy of
 * the migrated template. The engine and its workers start before the clock does. `starters`
 * concurrent loops then start runs for `startForMs`, pausing while `maxOpen` started runs are not yet
 * seen finished: the pool always has work queued, and the phase ends a bounded drain after the
 * starting stops, however fast or slow the engine is.
 */
export async function runThroughputPhase(
  setup: PhaseSetup,
  options: { concurrency: number; startForMs: number; starters: number; maxOpen: number },
): Promise<ThroughputResult> {
  const { concurrency, startForMs, starters, maxOpen } = options;
  const name = `bench_c${concurrency}`;
  const url = await createDatabase(setup.adminUrl, name, { template: setup.template });
  const before = await readDatabaseCounters(setup.adminUrl, name);

  const bench = createBenchFlow();
  const { db, engine, poolSize } = await openBenchEngine(url, concurrency, bench);
  const observer = await RunObserver.open(asObserver(url));
  const load: LoadState = {
    started: 0,
    finished: 0,
    allStarted: false,
    runningSum: 0,
    polls: 0,
    sessions: new Map(),
  };
  let observedEnd: number;
  let startsDone = 0;
  let firstStart = 0;
  let cpuBefore: CpuTimes;
  let cpuAfter: CpuTimes;
  try {
    engine.startWorkers();
    progress(
      `c=${concurrency}: starting runs for ${startForMs / 1000} s, at most ${maxOpen} open ` +
        `(${starters} starters, pool of ${poolSize} connections)`,
    );
    cpuBefore = await readCpuTimes(setup.dataDir);
    firstStart = performance.now();
    const starter = async () => {
      while (performance.now() - firstStart < startForMs) {
        if (load.started - load.finished >= maxOpen) {
          await sleep(2);
          continue;
        }
        load.started += 1;
        await engine.startFlow(bench.flow, { n: load.started });
      }
    };
    const starting = Promise.all(Array.from({ length: starters }, starter)).then(() => {
      startsDone = performance.now();
      load.allStarted = true;
    });
    const finishing = waitForFinishedRuns(observer, load, { pollMs: 20, stallMs: 30_000, label: `c=${concurrency}` });
    // Whichever fails first ends the phase; the other's later failure must not go unhandled.
    starting.catch(() => undefined);
    finishing.catch(() => undefined);
    await Promise.race([starting, finishing]);
    await starting;
    observedEnd = await finishing;
    cpuAfter = await readCpuTimes(setup.dataDir);
  } finally {
    await engine.stopWorkers();
    await db.close();
  }
  const times = await observer.completedRunTimes();
  await observer.close();
  await waitForNoSessions(setup.adminUrl, name);
  const after = await readDatabaseCounters(setup.adminUrl, name);
  const statements = setup.statementsEnabled ? await readStatementStats(setup.adminUrl, name, observerRole) : null;

  const flows = load.started;
  if (times.length !== flows) throw new Error(`c=${concurrency}: ${flows} runs started, ${times.length} completed`);
  const windowMs = Math.max(...times.map((t) => t.finishedMs)) - Math.min(...times.map((t) => t.createdMs));
  const latencies = times.map((t) => t.finishedMs - t.createdMs);
  const result: ThroughputResult = {
    concurrency,
    poolSize,
    flows,
    steps: flows * stepsPerFlow,
    maxOpen,
    meanRunning: load.runningSum / load.polls,
    meanSessions: [...load.sessions]
      .map(([state, sum]) => [state, sum / load.polls] as const)
      .sort((a, b) => b[1] - a[1]),
    windowMs,
    observedWindowMs: observedEnd - firstStart,
    startsDoneMs: startsDone - firstStart,
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
    commits: after.xactCommit - before.xactCommit - observer.queries,
    rollbacks: after.xactRollback - before.xactRollback,
    writeTransactions: after.nextXid - before.nextXid,
    statements,
    cpu: coresBusy(cpuBefore, cpuAfter, observedEnd - firstStart),
  };
  progress(
    `c=${concurrency}: ${flows} runs in ${(windowMs / 1000).toFixed(2)} s → ${((flows * 1000) / windowMs).toFixed(0)} flows/s`,
  );
  return result;
}
