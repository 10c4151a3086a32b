import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, migrate, type Database } from '@sagaflow/engine';
import { createBenchFlow } from './bench-flow.ts';
import { createBenchEngine } from './open-bench-engine.ts';
import { exitOf, forkBenchChild } from './fork-bench-child.ts';
import { progress } from './progress.ts';
import { closedLoopFigures, runClosedLoop, type ClosedLoopFigures } from './run-closed-loop.ts';
import { driveEngine } from './sagaflow-peer.ts';

/** Where the embedded database keeps its pages: the two ways a host runs the engine's default. */
export type PgliteStore = 'memory' | 'data-dir';

export interface PglitePlan {
  readonly concurrencies: readonly number[];
  readonly warmupMs: number;
  readonly measureMs: number;
}

/** A closed loop's figures with its CPU: process.cpuUsage() over the measured window ÷ its flows. */
export interface PgliteLoopFigures extends ClosedLoopFigures {
  /** PGlite's PostgreSQL runs in this process, so this is engine (or floor) and database together. */
  readonly nodeCpuMsPerFlow: number;
}

/** One store at one concurrency: the comparison's figures, for the engine on PGlite, and its floor. */
export interface PglitePhaseResult extends PgliteLoopFigures {
  readonly store: PgliteStore;
  /** The process that ran the phase: a child of the bench's, nobody else's work in it. */
  readonly pid: number;
  readonly concurrency: number;
  /** fsync and synchronous_commit as the embedded server reports them: how durable its commits are. */
  readonly settings: string;
  /** The same closed loop on the same database writing what 3 steps need by hand: what PGlite itself costs. */
  readonly floor: PgliteLoopFigures;
}

/** What pglite-phase-child.ts is told: one store at one concurrency. */
export interface PglitePhaseSpec extends PglitePlan {
  readonly store: PgliteStore;
  readonly concurrency: number;
}

/**
 * The comparison's 3-step flow on embedded PGlite, the engine's default database: in memory, and on
 * a fresh data directory under the OS temp dir. Each phase runs in a process of its own
 * (pglite-phase-child.ts), as the comparison's phases do (ADR 0049): PGlite runs inside the process
 * that queries it, so every statement of it would otherwise pay for what the bench's process already
 * ran (DBOS's AsyncLocalStorage hooks on every promise). Fails if a child exits before it sent its result.
 */
export async function runPglitePhases(plan: PglitePlan): Promise<PglitePhaseResult[]> {
  const results: PglitePhaseResult[] = [];
  for (const store of ['memory', 'data-dir'] as const) {
    for (const concurrency of plan.concurrencies)
      results.push(await runPglitePhaseInChild({ ...plan, store, concurrency }));
  }
  return results;
}

/** One phase in a child of its own, which sends back its result and exits. */
export async function runPglitePhaseInChild(spec: PglitePhaseSpec): Promise<PglitePhaseResult> {
  const child = forkBenchChild(new URL('./pglite-phase-child.ts', import.meta.url), [JSON.stringify(spec)]);
  let result: PglitePhaseResult | undefined;
  child.on('message', (message: PglitePhaseResult) => void (result = message));
  const exit = await exitOf(child);
  if (result === undefined || exit !== 'code 0')
    throw new Error(
      `the PGlite ${spec.store} c=${spec.concurrency} phase's process ${child.pid} exited (${exit}) before it sent its result`,
    );
  return result;
}

/**
 * One phase in this process: a new, migrated database (migration is outside the windows), then the
 * same closed loop as the PostgreSQL phases, first for the hand-written floor, then for the engine:
 * a warm-up, the measured window, close.
 */
export async function runPglitePhase({ store, concurrency, ...plan }: PglitePhaseSpec): Promise<PglitePhaseResult> {
  const dataDir = store === 'data-dir' ? await mkdtemp(join(tmpdir(), 'sagaflow-bench-pglite-')) : undefined;
  try {
    progress(`PGlite ${store} c=${concurrency}: migrating a fresh database${dataDir ? ` in ${dataDir}` : ''}`);
    const db = await createDatabase({ kind: 'pglite', dataDir });
    let settings;
    try {
      await migrate(db);
      const [row] = await db.driver.query<{ fsync: string; synchronous_commit: string }>(
        `select current_setting('fsync') as fsync, current_setting('synchronous_commit') as synchronous_commit`,
      );
      settings = `fsync=${row?.fsync}, synchronous_commit=${row?.synchronous_commit}`;
    } catch (error) {
      await db.close();
      throw error;
    }
    let floor;
    try {
      floor = await measureLoop(concurrency, plan, await handWrittenFlow(db));
    } catch (error) {
      await db.close();
      throw error;
    }
    const bench = createBenchFlow();
    const peer = driveEngine(bench, db, createBenchEngine(db, concurrency, bench));
    let engine;
    try {
      engine = await measureLoop(concurrency, plan, (n) => peer.runOne(n));
    } finally {
      await peer.close();
    }
    const result: PglitePhaseResult = { store, pid: process.pid, concurrency, settings, ...engine, floor };
    progress(
      `PGlite ${store} c=${concurrency}: ${result.flowsPerSecond.toFixed(0)} flows/s, p50 ${result.latencyP50Ms.toFixed(1)} ms ` +
        `(${result.flows} flows in ${(result.windowMs / 1000).toFixed(1)} s; ${settings}); hand-written floor ` +
        `${floor.flowsPerSecond.toFixed(0)} flows/s`,
    );
    return result;
  } finally {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }
}

/** A warm-up, then the measured closed loop with this process's CPU over it. */
async function measureLoop(
  concurrency: number,
  plan: PglitePlan,
  runOne: (n: number) => Promise<void>,
): Promise<PgliteLoopFigures> {
  const warmup = await runClosedLoop(concurrency, plan.warmupMs, runOne);
  const before = process.cpuUsage();
  const loop = await runClosedLoop(concurrency, plan.measureMs, runOne);
  const used = process.cpuUsage(before);
  return { ...closedLoopFigures(warmup, loop), nodeCpuMsPerFlow: (used.user + used.system) / 1000 / loop.flows };
}

/**
 * The floor under a 3-step flow: per step, the smallest durable record of it, a row inserted as
 * Running and updated to Completed with its output, in one transaction; three steps one after the
 * other. No history, no claim, no run row: what any engine would pay PGlite at the least.
 */
async function handWrittenFlow(db: Database): Promise<(n: number) => Promise<void>> {
  await db.driver.exec('create table bench_floor_steps (id serial primary key, status text not null, output jsonb)');
  return async (n) => {
    for (let step = 1; step <= 3; step++) {
      await db.driver.transaction(async (tx) => {
        const [row] = await tx.query<{ id: number }>(
          `insert into bench_floor_steps (status) values ('Running') returning id`,
        );
        await tx.query(`update bench_floor_steps set status = 'Completed', output = $2 where id = $1`, [
          row?.id,
          JSON.stringify({ n, step }),
        ]);
      });
    }
  };
}
