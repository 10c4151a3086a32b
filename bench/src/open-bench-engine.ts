import { createDatabase, createEngine, type Database, type Engine } from '@sagaflow/engine';
import { pino, type Logger } from 'pino';
import type { BenchFlow } from './bench-flow.ts';

export interface BenchEngine {
  readonly db: Database;
  readonly engine: Engine;
  readonly poolSize: number;
}

/**
 * One engine with one worker pool of `concurrency` on database `url`, with the engine's defaults for
 * everything else. The connection pool gets a few connections beyond the workers, for the job
 * claimer and the bench's starters.
 */
export async function openBenchEngine(url: string, concurrency: number, bench: BenchFlow): Promise<BenchEngine> {
  const poolSize = concurrency + 4;
  const db = await createDatabase({ kind: 'postgres', url, poolSize });
  return { db, engine: createBenchEngine(db, concurrency, bench), poolSize };
}

/**
 * The bench's engine on an open database (PostgreSQL or PGlite): the bench flow, a worker pool of
 * `concurrency`, the engine's defaults for the rest. Its logs (warnings and up) go to stderr so
 * stdout stays the report, unless the caller brings its own `logger`.
 */
export function createBenchEngine(
  db: Database,
  concurrency: number,
  bench: BenchFlow,
  logger: Logger = pino({ name: 'sagaflow', level: 'warn' }, pino.destination(2)),
): Engine {
  return createEngine({
    db,
    flows: [bench.flow],
    actions: [bench.action],
    config: { worker: { concurrency } },
    logger,
  });
}
