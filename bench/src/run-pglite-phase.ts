import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, migrate } from '@sagaflow/engine';
import { createBenchFlow } from './bench-flow.ts';
import { createBenchEngine } from './open-bench-engine.ts';
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

/** One store at one concurrency: the comparison's figures, for the engine on PGlite. */
export interface PglitePhaseResult extends ClosedLoopFigures {
  readonly store: PgliteStore;
  readonly concurrency: number;
  /** fsync and synchronous_commit as the embedded server reports them: how durable its commits are. */
  readonly settings: string;
  /** process.cpuUsage() over the measured window ÷ its flows: the engine and PGlite's PostgreSQL both run here. */
  readonly nodeCpuMsPerFlow: number;
}

/**
 * The comparison's 3-step flow on embedded PGlite, the engine's default database: in memory, and on
 * a fresh data directory under the OS temp dir. Each phase gets a new, migrated database (migration
 * is outside the windows), then the same closed loop as the PostgreSQL phases: a warm-up, the
 * measured window, close.
 */
export async function runPglitePhases(plan: PglitePlan): Promise<PglitePhaseResult[]> {
  const results: PglitePhaseResult[] = [];
  for (const store of ['memory', 'data-dir'] as const) {
    for (const concurrency of plan.concurrencies) results.push(await runPglitePhase(store, concurrency, plan));
  }
  return results;
}

async function runPglitePhase(store: PgliteStore, concurrency: number, plan: PglitePlan): Promise<PglitePhaseResult> {
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
    const bench = createBenchFlow();
    const peer = driveEngine(bench, db, createBenchEngine(db, concurrency, bench));
    let warmup;
    let loop;
    let nodeMs;
    try {
      warmup = await runClosedLoop(concurrency, plan.warmupMs, (n) => peer.runOne(n));
      const before = process.cpuUsage();
      loop = await runClosedLoop(concurrency, plan.measureMs, (n) => peer.runOne(n));
      const used = process.cpuUsage(before);
      nodeMs = (used.user + used.system) / 1000;
    } finally {
      await peer.close();
    }
    const result: PglitePhaseResult = {
      store,
      concurrency,
      settings,
      ...closedLoopFigures(warmup, loop),
      nodeCpuMsPerFlow: nodeMs / loop.flows,
    };
    progress(
      `PGlite ${store} c=${concurrency}: ${result.flowsPerSecond.toFixed(0)} flows/s, p50 ${result.latencyP50Ms.toFixed(1)} ms ` +
        `(${loop.flows} flows in ${(loop.windowMs / 1000).toFixed(1)} s; ${settings})`,
    );
    return result;
  } finally {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }
}
