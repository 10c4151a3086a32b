import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase as openDatabase } from '@sagaflow/engine';
import { createDatabase } from '@sagaflow/test-postgres';
import { createBenchFlow } from './bench-flow.ts';
import { forkReplica, type Replica } from './fork-replica.ts';
import { asObserver } from './observer-role.ts';
import { createBenchEngine } from './open-bench-engine.ts';
import { progress } from './progress.ts';
import { readCpuTimes, readProcessCpuMs } from './read-cpu-times.ts';
import { RunObserver } from './run-observer.ts';

export interface ReplicaPlan {
  readonly adminUrl: string;
  /** The migrated database each phase clones. */
  readonly template: string;
  /** The cluster's data directory, to find its processes' CPU time. */
  readonly dataDir: string;
  readonly processes: number;
  /** worker.concurrency of each process. */
  readonly concurrencyPerProcess: number;
  /** Started-but-unfinished runs the starter keeps. */
  readonly backlog: number;
  /** Concurrent startFlow loops in the starter. */
  readonly starters: number;
  readonly warmupMs: number;
  readonly measureMs: number;
}

/** Cores busy on average over the measured window; null where /proc could not be read. */
export interface ReplicaCores {
  /** The worker processes together. */
  readonly workers: number | null;
  /** This process: the starter's engine and the bench's polling. */
  readonly starter: number;
  readonly postgres: number | null;
  /** The whole machine, everything included. */
  readonly machine: number | null;
  /** What is neither of the above: other people's work on the machine. */
  readonly other: number | null;
}

export interface ReplicaResult {
  readonly processes: number;
  readonly concurrencyPerProcess: number;
  readonly backlog: number;
  /** Fork of the first worker process → the last one ready. */
  readonly startupMs: number;
  /** Runs whose finished_at falls in the measured window. */
  readonly flows: number;
  readonly windowMs: number;
  readonly flowsPerSecond: number;
  /** The fewest started-but-unfinished runs seen during the window: below processes × concurrency, workers went short of work. */
  readonly minOpen: number;
  readonly cores: ReplicaCores;
  readonly machineCores: number;
  /**
   * Errors the worker processes' engines logged over the whole phase: each is a job that failed and
   * waits out its lease (worker.lease_seconds) before another worker retries its run.
   */
  readonly workerErrors: number;
}

/** The scale-out section: one {@link runReplicaPhase} per entry of `processes`, in order. */
export async function runScaleOut(
  plan: Omit<ReplicaPlan, 'processes'> & { readonly processes: readonly number[] },
): Promise<ReplicaResult[]> {
  const results: ReplicaResult[] = [];
  for (const processes of plan.processes) results.push(await runReplicaPhase({ ...plan, processes }));
  return results;
}

/**
 * `processes` worker processes (replica-worker.ts, each an engine with its own pool) on one fresh
 * clone of the migrated template, while a starter in this process keeps `backlog` runs started and
 * unfinished. After every worker is ready and a warm-up, flows/s is the runs whose engine-recorded
 * finished_at falls in the measured window ÷ the window; CPU comes from /proc over the same window.
 */
export async function runReplicaPhase(plan: ReplicaPlan): Promise<ReplicaResult> {
  const { processes, concurrencyPerProcess, backlog } = plan;
  const url = await createDatabase(plan.adminUrl, `replicas_p${processes}`, { template: plan.template });
  const observer = await RunObserver.open(asObserver(url));
  const bench = createBenchFlow();
  const starterDb = await openDatabase({ kind: 'postgres', url, poolSize: plan.starters + 1 });
  // Starts runs only: its workers never start, so every step runs in the worker processes.
  const starterEngine = createBenchEngine(starterDb, 1, bench);
  const load = { started: 0, finished: 0, minOpen: backlog, measuring: false, done: false };
  const replicas: Replica[] = [];
  let stopped: PromiseSettledResult<{ errors: number }>[];
  let window: { from: number; to: number; startupMs: number; cores: ReplicaCores };
  try {
    const starter = async () => {
      while (!load.done) {
        if (load.started - load.finished >= backlog) {
          await sleep(2);
          continue;
        }
        load.started += 1;
        await starterEngine.startFlow(bench.flow, { n: load.started });
      }
    };
    const poller = async () => {
      while (!load.done) {
        const { finished, notCompleted } = await observer.countFinished();
        if (notCompleted > 0) throw new Error(`scale-out: ${notCompleted} run(s) did not complete`);
        load.finished = finished;
        if (load.measuring) load.minOpen = Math.min(load.minOpen, load.started - finished);
        await sleep(20);
      }
    };
    const feeding = Promise.all([poller(), ...Array.from({ length: plan.starters }, starter)]);
    feeding.catch(() => undefined);

    progress(`scale-out ${processes} process(es): forking, ${concurrencyPerProcess} workers each`);
    const forkedAt = performance.now();
    replicas.push(
      ...(await Promise.all(Array.from({ length: processes }, () => forkReplica(url, concurrencyPerProcess)))),
    );
    const startupMs = performance.now() - forkedAt;
    // A fresh process's first queries are slow (Prisma, JIT): the window opens once as many runs
    // have finished as there are worker slots, judged by progress rather than by the clock.
    const warmupRuns = load.finished + processes * concurrencyPerProcess;
    progress(`scale-out ${processes}: ready in ${(startupMs / 1000).toFixed(1)} s; warming up (${warmupRuns} runs)`);
    await Promise.race([warmUp(load, warmupRuns, plan.warmupMs), feeding]);

    progress(`scale-out ${processes}: measuring ${plan.measureMs / 1000} s`);
    // Scanning /proc takes seconds on a busy machine, and the CPU it reads spans the scans: the
    // window is that whole span, so flows and CPU cover the same time.
    const from = Date.now();
    const cpuBefore = await readAllCpu(plan.dataDir, replicas);
    load.measuring = true;
    await Promise.race([sleep(plan.measureMs), feeding]);
    load.measuring = false;
    const cpuAfter = await readAllCpu(plan.dataDir, replicas);
    const to = Date.now();
    load.done = true;
    await feeding;
    const failed = replicas.map((r) => r.failure()).find((f) => f !== null);
    if (failed) throw new Error(`scale-out ${processes}: ${failed} during the window`);
    window = { from, to, startupMs, cores: coresOver(cpuBefore, cpuAfter, to - from) };
  } finally {
    load.done = true;
    stopped = await Promise.allSettled(replicas.map((r) => r.stop()));
    await starterDb.close();
  }
  const notStopped = stopped.find((s) => s.status === 'rejected');
  if (notStopped) throw notStopped.reason;
  const workerErrors = stopped.reduce((sum, s) => sum + (s.status === 'fulfilled' ? s.value.errors : 0), 0);
  const times = await observer.completedRunTimes();
  await observer.close();

  const windowMs = window.to - window.from;
  const flows = times.filter((t) => t.finishedMs >= window.from && t.finishedMs < window.to).length;
  const result: ReplicaResult = {
    processes,
    concurrencyPerProcess,
    backlog,
    startupMs: window.startupMs,
    flows,
    windowMs,
    flowsPerSecond: (flows * 1000) / windowMs,
    minOpen: load.minOpen,
    cores: window.cores,
    machineCores: availableParallelism(),
    workerErrors,
  };
  progress(
    `scale-out ${processes}: ${result.flowsPerSecond.toFixed(0)} flows/s (${flows} runs in ${(windowMs / 1000).toFixed(1)} s), ` +
      `machine ${result.cores.machine?.toFixed(2) ?? '?'} of ${result.machineCores} cores busy`,
  );
  return result;
}

/** Waits until `runs` runs have finished and at least `minMs` have passed; fails after a minute without progress. */
async function warmUp(load: { finished: number }, runs: number, minMs: number): Promise<void> {
  const startedAt = performance.now();
  let seen = load.finished;
  let movedAt = startedAt;
  while (load.finished < runs || performance.now() - startedAt < minMs) {
    if (load.finished !== seen) [seen, movedAt] = [load.finished, performance.now()];
    if (performance.now() - movedAt > 60_000) throw new Error(`scale-out: no run finished for 60 s (${seen} finished)`);
    await sleep(20);
  }
}

interface AllCpu {
  readonly starterMs: number;
  readonly postgresMs: number | null;
  readonly machineMs: number | null;
  readonly workersMs: number | null;
}

async function readAllCpu(dataDir: string, replicas: readonly Replica[]): Promise<AllCpu> {
  const [own, workers] = await Promise.all([
    readCpuTimes(dataDir),
    Promise.all(replicas.map((r) => readProcessCpuMs(r.pid))),
  ]);
  const workersMs = workers.includes(null) ? null : workers.reduce<number>((sum, ms) => sum + (ms ?? 0), 0);
  return { starterMs: own.nodeMs, postgresMs: own.postgresMs, machineMs: own.machineMs, workersMs };
}

function coresOver(before: AllCpu, after: AllCpu, wallMs: number): ReplicaCores {
  const per = (from: number | null, to: number | null) => (from === null || to === null ? null : (to - from) / wallMs);
  const workers = per(before.workersMs, after.workersMs);
  const starter = (after.starterMs - before.starterMs) / wallMs;
  const postgres = per(before.postgresMs, after.postgresMs);
  const machine = per(before.machineMs, after.machineMs);
  const other =
    machine === null || workers === null || postgres === null
      ? null
      : Math.max(0, machine - workers - starter - postgres);
  return { workers, starter, postgres, machine, other };
}
