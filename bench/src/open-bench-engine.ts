import { createDatabase, createEngine, type Database, type Engine } from '@sagaflow/engine';
import { pino, type Logger } from 'pino';
import type { BenchFlow } from './bench-flow.ts';

export interface BenchEngine {
  readonly db: Database;
  readonly engine: Engine;
  readonly poolSize: number;
}

/** What a bench run may change in the engine it measures; everything else is the engine's default. */
export interface BenchEngineOptions {
  /** Its logs; by default warnings and up go to stderr, so stdout stays the report. */
  readonly logger?: Logger;
  /** `worker.notify` (`--no-notify`): the pool then finds queued work by polling alone. */
  readonly notify?: boolean;
}

/**
 * One engine with one worker pool of `concurrency` on database `url`, with the engine's defaults for
 * everything else. The connection pool gets a few connections beyond the workers, for the job
 * claimer and the bench's starters.
 */
export async function openBenchEngine(
  url: string,
  concurrency: number,
  bench: BenchFlow,
  options: BenchEngineOptions = {},
): Promise<BenchEngine> {
  const poolSize = concurrency + 4;
  const db = await createDatabase({ kind: 'postgres', url, poolSize });
  return { db, engine: createBenchEngine(db, concurrency, bench, options), poolSize };
}

/**
 * The bench's engine on an open database (PostgreSQL or PGlite): the bench flow, a worker pool of
 * `concurrency`, the engine's defaults for the rest but what `options` says.
 */
export function createBenchEngine(
  db: Database,
  concurrency: number,
  bench: BenchFlow,
  options: BenchEngineOptions = {},
): Engine {
  return createEngine({
    db,
    flows: [bench.flow],
    actions: [bench.action],
    config: { worker: { concurrency, ...(options.notify === undefined ? {} : { notify: options.notify }) } },
    logger: options.logger ?? pino({ name: 'sagaflow', level: 'warn' }, pino.destination(2)),
  });
}
