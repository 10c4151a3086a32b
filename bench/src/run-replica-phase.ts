import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase } from '@sagaflow/test-postgres';
import { forkReplica, type Replica } from './fork-replica.ts';
import { forkReplicaStarter, type ReplicaStarter } from './fork-replica-starter.ts';
import { asObserver } from './observer-role.ts';
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
  /** Concurrent startFlow loops in the starter process. */
  readonly starters: number;
  readonly warmupMs: number;
  readonly measureMs: number;
}

/** Cores busy on average over the measured window; null where /proc could not be read. */
export interface ReplicaCores {
  /** The worker processes together. */
  readonly workers: number | null;
  /** The starter process (its engine and the observer's polling) and this process, which waits on it. */
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
 * clone of the migrated template, while a starter process (replica-starter.ts, forked first) keeps
 * `backlog` runs started and unfinished. Every process of the phase is a fresh one, as the
 * comparison's phases are (ADR 0049, 0055): nothing DBOS left in the bench's process runs in them.
 * After every worker is ready and a warm-up, flows/s is the runs whose engine-recorded finished_at
 * falls in the measured window ÷ the window; CPU comes from /proc over the same window.
 */
export async function runReplicaPhase(plan: ReplicaPlan): Promise<ReplicaResult> {
  const { processes, concurrencyPerProcess, backlog } = plan;
  const url = await createDatabase(plan.adminUrl, `replicas_p${processes}`, { template: plan.template });
  const observer = await RunObserver.open(asObserver(url));
  const load = { started: 0, finished: 0, minOpen: backlog, measuring: false };
  const replicas: Replica[] = [];
  let starter: ReplicaStarter | undefined;
  let stopped: PromiseSettledResult<{ errors: number }>[];
  let window: { from: number; to: number; startupMs: number; cores: ReplicaCores };
  try {
    starter = forkReplicaStarter({ url, backlog, starters: plan.starters }, ({ started, finished }) => {
      [load.started, load.finished] = [started, finished];
      if (load.measuring) load.minOpen = Math.min(load.minOpen, started - finished);
    });
    const feeding = starter.running;

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
    const cpuBefore = await readAllCpu(plan.dataDir, starter.pid, replicas);
    load.measuring = true;
    await Promise.race([sleep(plan.measureMs), feeding]);
    load.measuring = false;
    const cpuAfter = await readAllCpu(plan.dataDir, starter.pid, replicas);
    const to = Date.now();
    await starter.stop();
    const failed = replicas.map((r) => r.failure()).find((f) => f !== null);
    if (failed) throw new Error(`scale-out ${processes}: ${failed} during the window`);
    window = { from, to, startupMs, cores: coresOver(cpuBefore, cpuAfter, to - from) };
  } finally {
    await starter?.stop().catch(() => undefined);
    stopped = await Promise.allSettled(replicas.map((r) => r.stop()));
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

async function readAllCpu(dataDir: string, starterPid: number, replicas: readonly Replica[]): Promise<AllCpu> {
  const [own, starter, workers] = await Promise.all([
    readCpuTimes(dataDir),
    readProcessCpuMs(starterPid),
    Promise.all(replicas.map((r) => readProcessCpuMs(r.pid))),
  ]);
  const workersMs = workers.includes(null) ? null : workers.reduce<number>((sum, ms) => sum + (ms ?? 0), 0);
  // An unreadable starter counts as this process alone: the column then says less than it spent.
  return { starterMs: own.nodeMs + (starter ?? 0), postgresMs: own.postgresMs, machineMs: own.machineMs, workersMs };
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
