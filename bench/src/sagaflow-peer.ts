import type { Database, Engine } from '@sagaflow/engine';
import { createBenchFlow, type BenchFlow } from './bench-flow.ts';
import { openBenchEngine, type BenchEngineOptions } from './open-bench-engine.ts';
import type { OpenPeer, PeerSystem } from './peer-system.ts';
import { prepareTemplateDatabase } from './prepare-template-database.ts';

/**
 * Sagaflow as the comparison drives it: one engine whose worker pool runs `concurrency` runs at
 * once; a flow is started with `startFlow` and known finished from the engine's `run.finished`
 * event, which is emitted after the transaction that finished the run committed.
 */
export function sagaflowPeer(options: BenchEngineOptions = {}): PeerSystem {
  return {
    name: 'Sagaflow',
    prepareTemplate: prepareTemplateDatabase,
    async open(url, concurrency): Promise<OpenPeer> {
      const bench = createBenchFlow();
      const { db, engine } = await openBenchEngine(url, concurrency, bench, options);
      return driveEngine(bench, db, engine);
    },
  };
}

/**
 * Starts `engine`'s workers and drives it the comparison's way: `runOne` starts the bench flow and
 * resolves on its `run.finished` event. Shared by the PostgreSQL and the PGlite phases so both
 * measure the same thing; `close` stops the workers and closes `db`. With `starter`, the flows are
 * started through that engine instead (one that runs no workers, as a service that only starts
 * runs does), so they reach `engine`'s pool through the job table, not handed over in process.
 */
export function driveEngine(bench: BenchFlow, db: Database, engine: Engine, starter: Engine = engine): OpenPeer {
  const waiting = new Map<string, (status: string) => void>();
  // A run can in principle finish before startFlow has returned its id to the waiter.
  const early = new Map<string, string>();
  const unsubscribe = engine.events.on('run.finished', ({ runId, status }) => {
    const resolve = waiting.get(runId);
    if (resolve) {
      waiting.delete(runId);
      resolve(status);
    } else early.set(runId, status);
  });
  engine.startWorkers();
  return {
    async runOne(n) {
      const { runId } = await starter.startFlow(bench.flow, { n });
      const status = early.get(runId) ?? (await new Promise<string>((resolve) => waiting.set(runId, resolve)));
      early.delete(runId);
      if (status !== 'Completed') throw new Error(`Sagaflow run ${runId} finished ${status}, not Completed`);
    },
    poolCounters: () => engine.workerCounters(),
    async close() {
      unsubscribe();
      await engine.stopWorkers();
      await db.close();
    },
  };
}
